import type { KubeClient } from './kube-client';

/** Where every cluster publishes its API server to pods: the `kubernetes` Service of `default`. */
export const API_SERVICE = { namespace: 'default', name: 'kubernetes' } as const;

/**
 * The ClusterIPs of the `kubernetes` Service: the address every pod reaches the API server at, and
 * so an address no node's serving certificate may name. Throws KubeApiError (403 without the
 * Role of deploy/base/rbac, 404 on a cluster without it).
 * @see https://kubernetes.io/docs/concepts/services-networking/cluster-ip-allocation/
 */
export async function readApiServiceAddresses(client: KubeClient, signal?: AbortSignal): Promise<string[]> {
  const service = await client.call(
    `read service ${API_SERVICE.namespace}/${API_SERVICE.name}`,
    (options) => client.core.readNamespacedService({ namespace: API_SERVICE.namespace, name: API_SERVICE.name }, options),
    signal,
  );
  const addresses = [...(service.spec?.clusterIPs ?? []), ...(service.spec?.clusterIP ? [service.spec.clusterIP] : [])];
  return [...new Set(addresses.filter((address) => address !== '' && address !== 'None'))];
}
