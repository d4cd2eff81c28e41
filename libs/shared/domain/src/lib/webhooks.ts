import type { NodeStatus } from './node-lifecycle';

/** What a webhook event says happened: a node's change of status (named from its status before and after), or what waits (a drain a PodDisruptionBudget blocks, a CSR pending too long). */
export const WEBHOOK_EVENT_TYPES = [
  'node.added',
  'install.started',
  'install.joined',
  'install.failed',
  'removal.started',
  'removal.done',
  'removal.failed',
  'node.changed',
  'drain.blocked',
  'csr.pending',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The event type of a node's status change (`before` null: the node was just added). Every change
 * is sent; those without a name of their own are `node.changed`, with both states in the payload.
 */
export function webhookEventType(before: NodeStatus | null, after: NodeStatus): WebhookEventType {
  if (before === null) {
    return 'node.added';
  }
  switch (after) {
    case 'INSTALLING':
      // Back from STALLED is the same install going on, not a new one.
      return before === 'STALLED' ? 'node.changed' : 'install.started';
    case 'JOINED':
      return before === 'INSTALLING' || before === 'STALLED' ? 'install.joined' : 'node.changed';
    case 'INSTALL_FAILED':
      return 'install.failed';
    case 'REMOVING':
      return 'removal.started';
    case 'REMOVED':
      return 'removal.done';
    case 'DRAIN_FAILED':
      return 'removal.failed';
    default:
      return 'node.changed';
  }
}
