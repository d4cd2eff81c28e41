import type { ResourceStrategy } from '../resource-definition';
import { fieldAt } from './field-labels';
import { STATUS_WRITE } from './status-subresource';

/** Field selectors the real server supports for nodes (besides metadata.name). */
export const NODE_FIELD_LABELS = { 'spec.unschedulable': fieldAt('spec.unschedulable', 'false') };

/**
 * Node strategy: a kubelet registers its Node with status filled in, so create keeps status; updates
 * of the main resource keep the stored status (only nodes/status changes it).
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/core/node/strategy.go
 */
export const NODE_STRATEGY: ResourceStrategy = {
  prepareForUpdate(node, old) {
    node.status = old.status;
  },
  subresourceWrites: { status: STATUS_WRITE },
};
