import type { InstallStep, NodeStatus, StepEventStatus } from '@ccos/shared/domain';
import type { EventBus } from './pubsub';

/**
 * Subscription topics and their payloads. Payloads are plain JSON (ISO dates) because with
 * several replicas they travel through Postgres NOTIFY; subscribers re-read what they need.
 * Each topic is published with an id (the cluster or node it concerns) so subscribers
 * only receive their own events.
 */
export const TOPICS = {
  /** id: clusterId */
  NODE_CHANGED: 'NODE_CHANGED',
  /** id: nodeId */
  INSTALL_PROGRESS: 'INSTALL_PROGRESS',
  /** id: clusterId */
  CSR_CHANGED: 'CSR_CHANGED',
  /** id: nodeId */
  REMOVAL_PROGRESS: 'REMOVAL_PROGRESS',
  /** id: batchId; a host of the batch changed phase (or the batch its settings). */
  BATCH_PROGRESS: 'BATCH_PROGRESS',
  /** id: clusterId; a node group decided something (reserve, install, delete, return to pool, ...) or one of its hosts changed state. */
  AUTOSCALING_ACTIVITY: 'AUTOSCALING_ACTIVITY',
  /** id: clusterId; a rollout of the cluster changed (its status, what it waits for, a node's phase). Payload: {@link RolloutChangedPayload}. */
  ROLLOUT_CHANGED: 'ROLLOUT_CHANGED',
  /** id: clusterId; an approval request of the cluster was made, decided or expired. Payload: {@link ApprovalsChangedPayload}. */
  APPROVALS_CHANGED: 'APPROVALS_CHANGED',
  /** No id: every replica forgets the sessions it names and closes their live connections. */
  SESSIONS_ENDED: 'SESSIONS_ENDED',
  /** No id: a user's role changed; every replica re-reads them and reconnects their live connections. */
  USER_CHANGED: 'USER_CHANGED',
  /**
   * No id, published by a replica to itself only: its connection that hears other replicas' events
   * dropped and is back, so events of the gap may not have reached it; subscribers catch up from
   * what is stored (an install's events by sequence number).
   */
  EVENTS_RESUMED: 'EVENTS_RESUMED',
} as const;

export interface ApprovalsChangedPayload {
  readonly clusterId: string;
  readonly requestId: string;
}

export interface RolloutChangedPayload {
  readonly rolloutId: string;
}

/** Sessions ended (sign-out, revocation, password change, user disabled or deleted): their open WebSocket connections close too. */
export interface SessionsEndedPayload {
  readonly userId: string;
  /** The sessions that ended; absent when every session of the user ended. */
  readonly sessionIds?: readonly string[];
}

export interface UserChangedPayload {
  readonly userId: string;
}

export interface NodeChangedPayload {
  readonly clusterId: string;
  readonly nodeId: string;
  readonly status: NodeStatus;
  readonly at: string;
}

export interface InstallProgressPayload {
  readonly nodeId: string;
  readonly runId: string;
  readonly seq: number;
  readonly step: InstallStep | null;
  readonly status: StepEventStatus | null;
  /** Set when the run itself changed state (started, succeeded, failed, cancelled, stalled). */
  readonly runStatus: string | null;
}

export interface CsrChangedPayload {
  readonly clusterId: string;
  readonly name: string;
  readonly kind: 'ADDED' | 'MODIFIED' | 'DELETED';
}

export interface RemovalProgressPayload {
  readonly nodeId: string;
  readonly removalId: string;
  readonly seq: number;
}

export interface AutoscalingActivityPayload {
  readonly groupId: string;
  /** The activity's seq, or null when only a host's state changed. */
  readonly seq: string | null;
  readonly kind: string | null;
}

export interface BatchProgressPayload {
  readonly batchId: string;
  readonly at: string;
}

/**
 * Publishes NODE_CHANGED for every node the node store reports as created, changed or deleted
 * (the store's change listener, wired by the composition root), and BATCH_PROGRESS for its batch
 * when it belongs to one: a batch page follows its hosts' status from the first change on (the
 * add-time check's ADDING → READY included), not only once the batch installer follows them.
 */
export function nodeChangePublisher(
  events: Pick<EventBus, 'publish'>,
  now: () => Date = () => new Date(),
): (node: { readonly id: string; readonly clusterId: string; readonly status: NodeStatus; readonly batchId?: string | null }) => void {
  return (node) => {
    const at = now().toISOString();
    const payload: NodeChangedPayload = { clusterId: node.clusterId, nodeId: node.id, status: node.status, at };
    events.publish(TOPICS.NODE_CHANGED, node.clusterId, payload);
    if (node.batchId) {
      const batch: BatchProgressPayload = { batchId: node.batchId, at };
      events.publish(TOPICS.BATCH_PROGRESS, node.batchId, batch);
    }
  };
}

/**
 * Follows one cluster's NODE_CHANGED topic: `each` runs for every change, one after the other,
 * until the returned iterator is closed (its `return()`) or `stopped()` says so. `failed` hears
 * why the following ended otherwise (the bus broke off), so the caller can follow again later.
 */
export function followNodeChanges(
  events: Pick<EventBus, 'subscribe'>,
  clusterId: string,
  each: (change: NodeChangedPayload) => Promise<void>,
  options: { readonly stopped: () => boolean; readonly failed: (error: unknown) => void },
): AsyncIterator<NodeChangedPayload> {
  const iterator = (events.subscribe(TOPICS.NODE_CHANGED, clusterId) as AsyncIterable<NodeChangedPayload>)[Symbol.asyncIterator]();
  void (async () => {
    for (;;) {
      const next = await iterator.next();
      if (next.done || options.stopped()) {
        return;
      }
      await each(next.value);
    }
  })().catch(options.failed);
  return iterator;
}
