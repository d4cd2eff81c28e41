import { randomUUID } from 'node:crypto';
import { NodeEntity, type RemovalDecision, RemovalRunEntity } from '@ccos/api/data-access-db';
import type { SshTarget } from '@ccos/api/data-access-ssh';
import { DEFAULT_REMOVAL_OPTIONS, type RemovalOptions } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';
import type { RemovalPhaseContext } from '../lib/phases/removal-phase';
import type { RemovalEventInput } from '../lib/removal-log';

/** The SSH login of a node's host (the host commands are faked: nothing connects). */
export const HOST_TARGET: SshTarget = { host: '198.18.0.11', port: 22, username: 'core', auth: { kind: 'password', password: 'not-used' } };

/** A RUNNING run of node w1 started by `operator` at `startedAt`. */
export function runningRun(overrides: Partial<Omit<RemovalRunEntity, 'options'>> & { options?: Partial<RemovalOptions> } = {}): RemovalRunEntity {
  const { options, ...fields } = overrides;
  return Object.assign(new RemovalRunEntity(), {
    id: randomUUID(),
    nodeId: randomUUID(),
    clusterId: randomUUID(),
    nodeName: 'w1',
    nodeUid: null,
    status: 'RUNNING',
    phase: 'DRAIN',
    reason: null,
    reasonCoded: null,
    blocking: [],
    cancelRequested: false,
    requestedBy: 'operator',
    owner: 'api-0#1',
    heartbeatAt: new Date(),
    startedAt: new Date(),
    finishedAt: null,
    updatedAt: new Date(),
    ...fields,
    options: { ...DEFAULT_REMOVAL_OPTIONS, ...options },
  });
}

/** The node record of a run's node. */
export function nodeOf(run: RemovalRunEntity, overrides: Partial<NodeEntity> = {}): NodeEntity {
  return Object.assign(new NodeEntity(), { id: run.nodeId, clusterId: run.clusterId, hostname: run.nodeName, status: 'REMOVING', origin: 'ADDED', ...overrides });
}

/** A phase's context with what the phase did to it. */
export interface PhaseHarness {
  readonly ctx: RemovalPhaseContext;
  /** The events the phase recorded, in order. */
  readonly events: RemovalEventInput[];
  /** Every heldByBudgets call. */
  readonly held: Array<number | null>;
  /** Every blocker the phase named (null: nothing holds the run), with since when. */
  readonly blockers: Array<{ blocker: Message | null; since: number | undefined }>;
  /** An operator has the run go on without its host. */
  skipHost(skip: RemovalDecision): void;
  /** An ADMIN has the drain go past the budgets. */
  forceDrain(decision: RemovalDecision): void;
  /** An operator's cancel: aborts the signal. */
  cancel(): void;
  /** This replica stops executing the run: aborts the signal. */
  interrupt(): void;
}

export function phaseHarness(run: RemovalRunEntity): PhaseHarness {
  const abort = new AbortController();
  const events: RemovalEventInput[] = [];
  const held: Array<number | null> = [];
  const blockers: PhaseHarness['blockers'] = [];
  const skipped = new AbortController();
  let skip: RemovalDecision | null = null;
  const forced = new AbortController();
  let force: RemovalDecision | null = null;
  let cancelled = false;
  let interrupted = false;
  return {
    ctx: {
      run,
      record: (event) => events.push(event),
      signal: abort.signal,
      cancelled: () => cancelled,
      interrupted: () => interrupted,
      heldByBudgets: (since) => held.push(since),
      blockedBy: async (blocker, since) => {
        blockers.push({ blocker, since });
      },
      hostSkip: () => skip,
      hostSkipSignal: AbortSignal.any([abort.signal, skipped.signal]),
      forceDrain: () => force,
      forceDrainSignal: forced.signal,
    },
    events,
    held,
    blockers,
    skipHost: (decision) => {
      skip = decision;
      skipped.abort();
    },
    forceDrain: (decision) => {
      force = decision;
      forced.abort();
    },
    cancel: () => {
      cancelled = true;
      abort.abort();
    },
    interrupt: () => {
      interrupted = true;
      abort.abort();
    },
  };
}

/** The recorded events as kind and message code (plain text as `text`), the way a reader tells them apart. */
export function kindsAndCodes(events: readonly RemovalEventInput[]): Array<[string, string]> {
  return events.map((event) => [event.kind, typeof event.message === 'string' ? 'text' : event.message.code]);
}
