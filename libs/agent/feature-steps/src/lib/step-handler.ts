import type { ApiClient, ArtifactClient } from '@ccos/agent/data-access-api';
import type {
  Clock, CommandResult, Executor, FileSystem, Http, JsonObject, Logger, Network, SystemInfo,
} from '@ccos/agent/util-host';
import type { InstallStep } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import type { AgentConfig } from './agent-config';
import type { FailureCode } from './failure-codes';

/** A PROGRESS event from a handler. */
export interface ProgressUpdate {
  readonly message: string;
  /** `message` by its code in the message catalogue, so the console shows it in the operator's language. */
  readonly coded?: Message;
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
  readonly coded?: Message;
  readonly detail?: JsonObject;
}

export interface StepFailure {
  readonly ok: false;
  readonly code: FailureCode;
  /** One human sentence or a few: what failed and what was observed. */
  readonly message: string;
  readonly coded?: Message;
  /** What to do about it. */
  readonly hint: string;
  readonly hintCoded?: Message;
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
  /** Problems with the config for this step (empty when fine), by code, so the service words them in the user's language. */
  validate(config: AgentConfig): CodedText[];
  run(ctx: StepContext): Promise<StepResult>;
}

/** A text a step says: plain (English, e.g. a command's own words) or a coded message of the catalogue. */
export type StepText = string | CodedText;

export function success(text: StepText, detail?: JsonObject): StepSuccess {
  const said = typeof text === 'string' ? { message: text } : { message: text.message, coded: bare(text) };
  return detail === undefined ? { ok: true, ...said } : { ok: true, ...said, detail };
}

export function failure(code: FailureCode, text: StepText, hint: StepText, extra: { detail?: JsonObject; command?: CommandResult } = {}): StepFailure {
  const said = typeof text === 'string' ? { message: text } : { message: text.message, coded: bare(text) };
  const advice = typeof hint === 'string' ? { hint } : { hint: hint.message, hintCoded: bare(hint) };
  return { ok: false, code, ...said, ...advice, ...extra };
}

/** A PROGRESS update with a coded message. */
export function progressOf(text: CodedText, update: Omit<ProgressUpdate, 'message' | 'coded'> = {}): ProgressUpdate {
  return { ...update, message: text.message, coded: bare(text) };
}

/** A coded text followed by the output line that explains it (a diagnosis's evidence), when there is one. */
export function withEvidence(text: CodedText, evidence: string | null): CodedText {
  return evidence === null ? text : message('agent.withEvidence', { text: bare(text), evidence });
}
