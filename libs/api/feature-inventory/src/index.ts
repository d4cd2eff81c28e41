export { createInventoryFeature, type InventoryFeature, type InventoryFeatureOptions } from './lib/inventory-feature';
export { InventoryResolver } from './lib/inventory.resolver';
export { INVENTORY_REMOVAL_OPTIONS, type InventoryPorts, type InventoryService, type NewInventoryHost, type RemovalSummary } from './lib/inventory.service';
export { INVENTORY_API_VERSION, INVENTORY_KIND, INVENTORY_SCHEMA } from './lib/inventory.schema';
