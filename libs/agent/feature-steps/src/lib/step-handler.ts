import type { ApiClient, ArtifactClient } from '@ccos/agent/data-access-api';
import type {
  Clock, CommandResult, Executor, FileSystem, Http, JsonObject, Logger, Network, SystemInfo,
} from '@ccos/agent/util-host';
import type { InstallStep } from '@ccos/shared/domain';
import type { AgentConfig } from './agent-config';
import type { FailureCode } from './failure-codes';

/** A PROGRESS event from a handler. */
export interface ProgressUpdate {
  readonly message: string;
  /** 0..100 within the step. */
  readonly progress?: number;
  readonly detail?: JsonObject;
}

/** Everything a handler may touch; all of it is faked in unit tests. */
export interface StepContext {
  readonly config: AgentConfig;
  readonly exec: Executor;
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly api: ApiClient;
  readonly http: Http;
  readonly net: Network;
  readonly system: SystemInfo;
  readonly artifacts: ArtifactClient;
  readonly log: Logger;
  /** Aborts when the operator cancels, the agent is stopped, or the token is refused. */
  readonly signal: AbortSignal;
  /** Spools a PROGRESS event (delivery happens in the background). */
  progress(update: ProgressUpdate): Promise<void>;
}

export interface StepSuccess {
  readonly ok: true;
  readonly message: string;
  readonly detail?: JsonObject;
}

export interface StepFailure {
  readonly ok: false;
  readonly code: FailureCode;
  /** One human sentence or a few: what failed and what was observed. */
  readonly message: string;
  /** What to do about it. */
  readonly hint: string;
  readonly detail?: JsonObject;
  /** The command that failed: its argv, exit code and output go into the event (tail) and the diagnostics (all). */
  readonly command?: CommandResult;
}

/** How a step ended. A failure is a value the agent reports, never an exception. */
export type StepResult = StepSuccess | StepFailure;

/**
 * One install step. `validate` checks the config before anything runs;
 * `run` must be idempotent (a retried run repeats the step on a host where
 * it may have half or fully happened).
 */
export interface StepHandler {
  readonly step: InstallStep;
  /** Problems with the config for this step (empty when fine). */
  validate(config: AgentConfig): string[];
  run(ctx: StepContext): Promise<StepResult>;
}

export function success(message: string, detail?: JsonObject): StepSuccess {
  return detail === undefined ? { ok: true, message } : { ok: true, message, detail };
}

export function failure(code: FailureCode, message: string, hint: string, extra: { detail?: JsonObject; command?: CommandResult } = {}): StepFailure {
  return { ok: false, code, message, hint, ...extra };
}
