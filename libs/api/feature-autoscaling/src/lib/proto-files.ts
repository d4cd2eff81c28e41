import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding externalgrpc.proto and the v1.Node subset: `proto/` beside the API bundle
 * (the build copies it there), or the library's own `proto/` when running from source.
 */
export function protoDir(): string {
  const candidates = [new URL('./proto/', import.meta.url), new URL('../../proto/', import.meta.url)].map((url) => fileURLToPath(url));
  const found = candidates.find((dir) => existsSync(`${dir}externalgrpc.proto`));
  if (!found) {
    throw new Error(`externalgrpc.proto not found in ${candidates.join(' or ')}`);
  }
  return found;
}

export const EXTERNALGRPC_PROTO = 'externalgrpc.proto';
export const NODE_PROTO = 'k8s.io/api/core/v1/node.proto';
/** The service's full name in externalgrpc.proto. */
export const CLOUD_PROVIDER_SERVICE = 'clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider';
