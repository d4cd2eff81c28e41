/**
 * Batches: the hosts of one bulk add, installed together with bounded concurrency. Each host
 * keeps its own node lifecycle; its place in the batch is a phase decided here from its
 * node status, so one host's failure never touches another's.
 */
import type { NodeStatus } from './node-lifecycle';

export const BATCH_PHASES = [
  /** Added with the batch; no install asked for yet. */
  'ADDED',
  /** Install asked for; waiting for its host to be ready and a free slot. */
  'QUEUED',
  /** Holding a slot: its install runs. */
  'ACTIVE',
  'JOINED',
  'FAILED',
  /** Taken out of the queue by cancelRemaining before it started. */
  'CANCELLED',
  /** Needs an operator before it can go on (a changed host key, leftovers of an earlier membership). */
  'HELD',
] as const;
export type BatchPhase = (typeof BATCH_PHASES)[number];

/** The default number of installs a batch runs at once (also bounded by the SSH pool). */
export const DEFAULT_BATCH_CONCURRENCY = 10;
export const MAX_BATCH_CONCURRENCY = 50;

/** What a host of a batch should do next, given its phase and node status. */
export type BatchStep =
  | { readonly kind: 'WAIT' }
  | { readonly kind: 'MOVE'; readonly to: BatchPhase }
  /** Wants a slot (QUEUED → ACTIVE), then `install` or `retry` of its node. */
  | { readonly kind: 'START'; readonly via: 'install' | 'retry' }
  /** Already holds a slot but its install never started (the service stopped in between). */
  | { readonly kind: 'RESUME'; readonly via: 'install' | 'retry' };

const ADD_FAILURES: readonly NodeStatus[] = ['AUTH_FAILED', 'UNREACHABLE', 'PRECHECK_FAILED'];

/**
 * Decides the next step of one host. `dirty` is true when its host carries leftovers of an
 * earlier membership that an operator has not cleaned yet: such a host is held, never joined.
 */
export function nextBatchStep(phase: BatchPhase, status: NodeStatus, dirty: boolean): BatchStep {
  if (status === 'JOINED' && phase !== 'JOINED') {
    return { kind: 'MOVE', to: 'JOINED' };
  }
  if (status === 'REMOVING' || status === 'REMOVED' || status === 'DRAIN_FAILED') {
    return phase === 'CANCELLED' || phase === 'FAILED' || phase === 'JOINED' ? { kind: 'WAIT' } : { kind: 'MOVE', to: 'CANCELLED' };
  }
  switch (phase) {
    case 'ADDED':
    case 'JOINED':
    case 'FAILED':
    case 'CANCELLED':
      return { kind: 'WAIT' };
    case 'HELD':
      return status === 'READY_TO_INSTALL' && !dirty ? { kind: 'MOVE', to: 'QUEUED' } : { kind: 'WAIT' };
    case 'QUEUED':
      if (ADD_FAILURES.includes(status)) {
        return { kind: 'MOVE', to: 'FAILED' };
      }
      if (status === 'HOST_KEY_CHANGED' || (status === 'READY_TO_INSTALL' && dirty)) {
        return { kind: 'MOVE', to: 'HELD' };
      }
      if (status === 'READY_TO_INSTALL') {
        return { kind: 'START', via: 'install' };
      }
      if (status === 'INSTALL_FAILED' || status === 'STALLED') {
        return { kind: 'START', via: 'retry' };
      }
      if (status === 'INSTALLING') {
        return { kind: 'MOVE', to: 'ACTIVE' };
      }
      return { kind: 'WAIT' };
    case 'ACTIVE':
      // A stalled agent is reported as a failure (its reason says it went silent) so that retryFailed
      // can restart it; should it come back and join, JOINED wins from any phase.
      if (status === 'INSTALL_FAILED' || status === 'STALLED' || ADD_FAILURES.includes(status)) {
        return { kind: 'MOVE', to: 'FAILED' };
      }
      if (status === 'HOST_KEY_CHANGED') {
        return { kind: 'MOVE', to: 'HELD' };
      }
      if (status === 'READY_TO_INSTALL') {
        return dirty ? { kind: 'MOVE', to: 'HELD' } : { kind: 'RESUME', via: 'install' };
      }
      return { kind: 'WAIT' };
  }
}

/** Phases that still need the service to act: a batch with any is in progress. */
export function isBatchPhaseOpen(phase: BatchPhase): boolean {
  return phase === 'QUEUED' || phase === 'ACTIVE';
}

/** How a batch stands, counted over its hosts. */
export interface BatchCounts {
  readonly total: number;
  readonly added: number;
  readonly queued: number;
  readonly installing: number;
  readonly joined: number;
  readonly failed: number;
  readonly cancelled: number;
  readonly waitingForOperator: number;
}

export type BatchState = 'ADDED' | 'INSTALLING' | 'FINISHED' | 'NEEDS_ATTENTION';

export function countBatch(phases: readonly BatchPhase[]): BatchCounts {
  const count = (phase: BatchPhase) => phases.filter((candidate) => candidate === phase).length;
  return {
    total: phases.length,
    added: count('ADDED'),
    queued: count('QUEUED'),
    installing: count('ACTIVE'),
    joined: count('JOINED'),
    failed: count('FAILED'),
    cancelled: count('CANCELLED'),
    waitingForOperator: count('HELD'),
  };
}

/** The batch as one word: still installing, finished, or finished with hosts to look at. */
export function batchState(counts: BatchCounts): BatchState {
  if (counts.queued + counts.installing > 0) {
    return 'INSTALLING';
  }
  if (counts.added === counts.total) {
    return 'ADDED';
  }
  return counts.failed + counts.waitingForOperator > 0 ? 'NEEDS_ATTENTION' : 'FINISHED';
}
