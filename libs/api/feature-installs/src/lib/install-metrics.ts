import type { InstallRunStore, NodeStore } from '@ccos/api/data-access-db';
import { AGENT_FAILURE_CODES, type InstallRunStatus, type InstallStep, SERVICE_FAILURE_CODES } from '@ccos/shared/domain';

/**
 * Told what installs did, for metrics. Each fact is reported once across replicas: by the
 * replica whose write stored it (the step event's insert, the run's RUNNING → ended update).
 */
export interface InstallObserver {
  /** A STARTED step ended (SUCCEEDED or FAILED) after `seconds` by the agent's clock. */
  stepFinished(step: InstallStep, outcome: 'SUCCEEDED' | 'FAILED', seconds: number): void;
  /** A step event was stored `lagSeconds` after it occurred on the host. */
  eventStored(lagSeconds: number): void;
  /** A run ended; `failureCode` is the agent's `detail.code`, a service-side cause, or `none`. */
  runFinished(outcome: Exclude<InstallRunStatus, 'RUNNING'>, failureCode: string): void;
  /** An agent's event was refused for good, and why. */
  eventRefused(reason: EventRefusal): void;
}

/** Why an agent's event was refused: its run had ended, or it was past the run's cap on events or on their bytes. */
export type EventRefusal = 'RUN_FINISHED' | 'EVENT_COUNT' | 'EVENT_BYTES';

/** An observer that ignores everything (tests and tools that do not count). */
export const UNOBSERVED_INSTALLS: InstallObserver = {
  stepFinished: () => undefined,
  eventStored: () => undefined,
  runFinished: () => undefined,
  eventRefused: () => undefined,
};

const KNOWN_CODES: ReadonlySet<string> = new Set(AGENT_FAILURE_CODES);

/**
 * The failure code of a FAILED event's detail as a metric label: one of the agent's known codes
 * (AGENT_FAILURE_CODES); anything else becomes UNKNOWN so a confused or hostile agent cannot grow
 * the label set with its own text.
 */
export function failureCodeOf(detail: Record<string, unknown> | null | undefined): string {
  const code = detail?.['code'];
  return typeof code === 'string' && KNOWN_CODES.has(code) ? code : SERVICE_FAILURE_CODES.unknown;
}

/** Counts read from Postgres at scrape time: every replica answers the same. */
export class InstallGauges {
  constructor(
    private readonly runs: InstallRunStore,
    private readonly nodes: NodeStore,
  ) {}

  /** Running install runs by the step they are at (the step of their latest event; their start step before any); runs waiting for a slot left out. */
  inProgressByStep(): Promise<Array<{ step: string; count: number }>> {
    return this.runs.runningByStep();
  }

  /** Install runs waiting for one of their cluster's install slots, by cluster. */
  waitingByCluster(): Promise<Array<{ clusterId: string; count: number }>> {
    return this.runs.waitingByCluster();
  }

  /** Nodes by cluster and status (removed nodes left out). */
  nodesByStatus(): Promise<Array<{ clusterId: string; status: string; count: number }>> {
    return this.nodes.countByStatus();
  }
}
