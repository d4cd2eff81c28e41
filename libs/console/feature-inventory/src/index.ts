export { INVENTORY_ROUTES } from './lib/inventory.routes';
