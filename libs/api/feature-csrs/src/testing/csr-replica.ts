import { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import { type CsrFeature, type CsrFeatureOptions, createCsrFeature } from '../lib/csr-feature';
import type { CsrTestWorld } from './csr-test-world';

/** A replica's CSR feature, with the cluster connections it uses. */
export interface CsrReplica extends CsrFeature {
  readonly connections: ClusterConnections;
}

/**
 * One replica of the service on the world's cluster: cluster connections of its own and the CSR
 * feature on them, as a process of the service has, on the world's clock. `stop` stops the
 * feature, then closes them.
 */
export function createCsrReplica(world: CsrTestWorld, options: Omit<CsrFeatureOptions, 'decisions' | 'inventory' | 'notices' | 'clusters' | 'connections'>): CsrReplica {
  const connections = new ClusterConnections(world.directory, options.logger);
  const feature = createCsrFeature({ clock: world.clock, ...options, ...world.stores, clusters: world.directory, connections });
  return {
    ...feature,
    connections,
    async stop() {
      await feature.stop();
      await connections.close();
    },
  };
}
