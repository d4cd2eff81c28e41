import type { ResourceStrategy } from '../resource-definition';
import { fieldAt } from './field-labels';
import { STATUS_WRITE } from './status-subresource';

/** Namespaces that the real server refuses to delete. */
export const UNDELETABLE_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];

/** Namespaces every cluster starts with. */
export const INITIAL_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export const NAMESPACE_FIELD_LABELS = { 'status.phase': fieldAt('status.phase', '') };

/**
 * Namespace strategy: the `kubernetes` finalizer, phase Active and the automatic
 * `kubernetes.io/metadata.name` label.
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#automatic-labelling
 */
export const NAMESPACE_STRATEGY: ResourceStrategy = {
  defaults(ns) {
    ns.spec ??= { finalizers: ['kubernetes'] };
    ns.status ??= { phase: 'Active' };
    ns.metadata.labels = { ...ns.metadata.labels, 'kubernetes.io/metadata.name': ns.metadata.name ?? '' };
  },
  prepareForCreate(ns) {
    ns.spec = { finalizers: ['kubernetes'] };
    ns.status = { phase: 'Active' };
  },
  prepareForUpdate(ns, old) {
    ns.spec = old.spec;
    ns.status = old.status;
  },
  subresourceWrites: { status: STATUS_WRITE },
};
