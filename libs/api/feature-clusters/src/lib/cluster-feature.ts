import type { ClusterStore } from '@ccos/api/data-access-db';
import type { ClusterAddressGuard, ServiceNamespaces } from '@ccos/api/data-access-kube';
import type { SecretBox } from '@ccos/api/util-secrets';
import { ClusterCheckService } from './cluster-check.service';
import { type ClusterChangeListener, ClusterService } from './cluster.service';

export interface ClusterFeatureOptions {
  readonly clusters: ClusterStore;
  /** Seals the clusters' credentials at rest. */
  readonly secrets: SecretBox;
  /** Which API server addresses the service connects to (ALLOW_CLUSTER_ADDRESSES). */
  readonly addresses: ClusterAddressGuard;
  /** Told after a cluster was registered or its settings changed. */
  readonly onChange: ClusterChangeListener;
  /** BOOTSTRAP_NAMESPACE and CSR_APPROVER_LEASE_NAMESPACE: where the readiness checks ask about the service's Roles. */
  readonly namespaces: ServiceNamespaces;
}

/** The cluster registry as the composition root sees it. */
export interface ClusterFeature {
  readonly service: ClusterService;
  /** Whether a cluster is ready for installs. */
  readonly checks: ClusterCheckService;
  /** A cluster's name, read once per process (it never changes once registered); its id when it cannot be read. */
  nameOf(clusterId: string): Promise<string>;
}

export function createClusterFeature(options: ClusterFeatureOptions): ClusterFeature {
  const service = new ClusterService(options.clusters, options.secrets, options.onChange, options.addresses);
  const names = new Map<string, string>();
  return {
    service,
    checks: new ClusterCheckService(service, options.namespaces),
    async nameOf(clusterId) {
      const known = names.get(clusterId);
      if (known !== undefined) {
        return known;
      }
      const name = await service.get(clusterId).then((cluster) => cluster.name, () => null);
      if (name === null) {
        return clusterId;
      }
      names.set(clusterId, name);
      return name;
    },
  };
}
