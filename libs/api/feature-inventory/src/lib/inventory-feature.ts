import type { ClusterStore, NodeGroupStore, NodeStore } from '@ccos/api/data-access-db';
import { InventoryResolver } from './inventory.resolver';
import { type InventoryPorts, InventoryService } from './inventory.service';

export interface InventoryFeatureOptions {
  readonly clusters: ClusterStore;
  readonly nodes: NodeStore;
  /** The node groups (pools) and their members. */
  readonly pools: NodeGroupStore;
  readonly ports: InventoryPorts;
}

/** Declarative inventory: plan, apply and export a cluster's workers as one file. */
export interface InventoryFeature {
  readonly service: InventoryService;
  readonly resolver: InventoryResolver;
}

export function createInventoryFeature(options: InventoryFeatureOptions): InventoryFeature {
  const service = new InventoryService(options.clusters, options.nodes, options.pools, options.ports);
  return { service, resolver: new InventoryResolver(service) };
}
