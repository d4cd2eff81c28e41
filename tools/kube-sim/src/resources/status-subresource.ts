import type { SubresourceWrite } from '../resource-definition';

/**
 * The `/status` subresource of most resources: only `status` changes, every other field (metadata
 * included, as ResetObjectMetaForStatus does) stays as stored.
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/#object-spec-and-status
 */
export const STATUS_WRITE: SubresourceWrite = {
  merge: (incoming, old) => ({ ...old, metadata: { ...old.metadata }, status: incoming.status ?? {} }),
};
