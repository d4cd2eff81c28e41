import type { RemovalBlockingPod, RemovalDecision, RemovalRunEntity } from '@ccos/api/data-access-db';
import type { RemovalPhase } from '@ccos/shared/domain';
import type { CodedText, Message } from '@ccos/shared/messages';
import type { RemovalEventInput } from '../removal-log';

/** What a phase may touch of its run; the runner gives one to each phase it runs. */
export interface RemovalPhaseContext {
  /** The run as last saved: its node, cluster, options and requester. */
  readonly run: RemovalRunEntity;
  /** Records an event of the run (stored and published in order, in the background). */
  record(event: RemovalEventInput): void;
  /** Aborts on an operator's cancel, when this replica stops, or when another replica took the run over. */
  readonly signal: AbortSignal;
  /** Whether an operator cancelled the run. */
  cancelled(): boolean;
  /** Whether this replica no longer executes the run (it is stopping, or the run was taken over): the run and the node are left as they are. */
  interrupted(): boolean;
  /** PodDisruptionBudgets have held the drain since `since` (epoch ms), or hold it no longer (null): the runner's blockedDrains. */
  heldByBudgets(since: number | null): void;
  /** Names what the run waits for now, since `since` (epoch ms), stored on the run and published; null once nothing holds it. */
  blockedBy(blocker: Message | null, since?: number): Promise<void>;
  /** An operator's decision that the run goes on without its host, once there is one. */
  hostSkip(): RemovalDecision | null;
  /** Aborts once an operator asks the run to go on without its host (and with `signal`). */
  readonly hostSkipSignal: AbortSignal;
  /** An ADMIN's decision that the drain goes past the budgets that hold it, once there is one. */
  forceDrain(): RemovalDecision | null;
  /** Aborts once an ADMIN asks the drain to go past the budgets that hold it. */
  readonly forceDrainSignal: AbortSignal;
}

/** How a phase ended: the run goes on, ends (the node stays cordoned as DRAIN_FAILED), or is left to whoever executes it now. */
export type RemovalPhaseResult =
  | {
      readonly outcome: 'NEXT';
      /** The drain found no Node: there is nothing to delete. */
      readonly nodeGone?: boolean;
    }
  | { readonly outcome: 'FAILED' | 'CANCELLED'; readonly reason: CodedText; readonly blocking: RemovalBlockingPod[] }
  | { readonly outcome: 'INTERRUPTED' };

/**
 * One phase of a removal run. `run` must be repeatable: a run resumed after a restart repeats the
 * phase it was in, which may have half or fully happened. A failure is a result, never an exception.
 */
export interface RemovalPhaseHandler {
  readonly phase: Exclude<RemovalPhase, 'DONE'>;
  run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult>;
}

export const NEXT: RemovalPhaseResult = { outcome: 'NEXT' };

/** The run ends FAILED with `reason`. */
export function failed(reason: CodedText, blocking: RemovalBlockingPod[] = []): RemovalPhaseResult {
  return { outcome: 'FAILED', reason, blocking };
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
