import {
  isUnauthenticated, uploadDiagnostics, type ApiClient, type ArtifactClient, type DrainOutcome, type EventSender,
} from '@ccos/agent/data-access-api';
import {
  formatCommand, tailText, type Clock, type Executor, type FileSystem, type Http, type JsonObject, type Logger, type Network, type SystemInfo,
} from '@ccos/agent/util-host';
import { describeStep, INSTALL_STEPS, stepIndex, type InstallStep, type StepEventStatus } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import type { AgentConfig } from './agent-config';
import { collectDiagnostics } from './diagnostics-bundle';
import type { RunControl } from './run-control';
import type { ProgressUpdate, StepContext, StepFailure, StepResult } from './step-handler';
import { failure, progressOf } from './step-handler';
import type { StepRegistry } from './step-registry';

/** How a run ended, and the process exit code that says so. */
export type RunOutcome =
  | { readonly kind: 'succeeded'; readonly exitCode: 0 | 6 }
  | { readonly kind: 'failed'; readonly step: InstallStep; readonly code: string; readonly exitCode: 1 }
  | { readonly kind: 'cancelled'; readonly step: InstallStep; readonly exitCode: 5 }
  | { readonly kind: 'terminated'; readonly step: InstallStep | null; readonly exitCode: 143 }
  | { readonly kind: 'unauthenticated'; readonly exitCode: 4 }
  | { readonly kind: 'runFinished'; readonly step: InstallStep | null; readonly exitCode: 7 };

/** Exit codes of `boot-worker run` (and of the detached agent). */
export const EXIT_CODES = {
  succeeded: 0,
  stepFailed: 1,
  badConfig: 2,
  alreadyRunning: 3,
  unauthenticated: 4,
  cancelled: 5,
  spoolNotDrained: 6,
  runFinished: 7,
  terminated: 143,
} as const;

export interface RunnerDeps {
  readonly config: AgentConfig;
  readonly registry: StepRegistry;
  readonly exec: Executor;
  readonly fs: FileSystem;
  readonly clock: Clock;
  /** Already observed by `control` (see {@link RunControl.observe}). */
  readonly api: ApiClient;
  readonly http: Http;
  readonly net: Network;
  readonly system: SystemInfo;
  readonly artifacts: ArtifactClient;
  readonly log: Logger;
  readonly sender: EventSender;
  readonly control: RunControl;
  readonly agentVersion: string;
  /** A PROGRESS heartbeat when a step has been silent this long (default 25 s). */
  readonly heartbeatMs?: number;
  /** How long to wait for the spool to drain before exiting (default 1 h). */
  readonly drainLimitMs?: number;
  /** The same after SIGTERM (default 5 s, retrying at once: `boot-worker stop` kills after its grace period). */
  readonly terminateDrainLimitMs?: number;
}

const MAX_MESSAGE = 2_000;

function clip(message: string): string {
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE - 1)}…`;
}

/** A long argv (73 rpm files) shortened for an event; the diagnostics keep it whole. */
export function shortCommand(argv: readonly string[]): string {
  if (argv.length <= 8) {
    return formatCommand(argv);
  }
  return `${formatCommand(argv.slice(0, 4))} … (${argv.length - 4} more arguments)`;
}

/**
 * The agent's main loop: runs the steps from `startStep` on, reports each
 * one (STARTED, PROGRESS…, SUCCEEDED or FAILED) through the spool, keeps a
 * heartbeat going during long steps, turns any exception into a FAILED
 * result, stops on operator cancel, SIGTERM, a refused token or the service
 * saying the run has ended (RUN_FINISHED: final, never retried), uploads
 * diagnostics after a failure and waits for the spool to drain.
 */
export class InstallRunner {
  private lastEventAt = 0;
  private lastProgress = 0;
  private lastMessage = '';
  private lastCoded: Message | undefined;
  private plainHttpNoted = false;

  constructor(private readonly deps: RunnerDeps) {}

  async run(terminate: AbortSignal): Promise<RunOutcome> {
    const { config, log, sender } = this.deps;
    const steps = config.steps ?? INSTALL_STEPS.slice(stepIndex(config.startStep));
    log.info(`run ${config.runId}: steps ${steps.join(', ')} (${sender.pendingCount} undelivered event(s) from an earlier start)`);
    sender.start();
    for (const step of steps) {
      const outcome = await this.runStep(step, terminate);
      if (outcome !== null) {
        return this.finish(outcome, terminate);
      }
    }
    log.info('all steps succeeded');
    return this.finish({ kind: 'succeeded', exitCode: 0 }, terminate);
  }

  /** Runs one step; null when it succeeded and the run goes on. */
  private async runStep(step: InstallStep, terminate: AbortSignal): Promise<RunOutcome | null> {
    const { registry, config, control, log } = this.deps;
    const handler = registry[step];
    const title = bare(describeStep(step).title);
    this.lastProgress = 0;
    if (!(await this.report(step, 'STARTED', { ...progressOf(message('agent.stepStarted', { step: title })), progress: 0, detail: { agentVersion: this.deps.agentVersion } }))) {
      return control.runFinished ? { kind: 'runFinished', step, exitCode: 7 } : { kind: 'unauthenticated', exitCode: 4 };
    }
    if (!this.plainHttpNoted && config.serviceTls === null) {
      // Said once per run, in the run's own record, so nobody reads this install as protected.
      this.plainHttpNoted = true;
      log.warn(`the installer service is reached over plain HTTP (${config.apiUrl})`);
      await this.report(step, 'PROGRESS', {
        ...progressOf(message('agent.plainHttp', { apiUrl: config.apiUrl })),
        progress: 0,
        detail: { warning: 'PLAIN_HTTP', apiUrl: config.apiUrl },
      });
    }
    const abort = AbortSignal.any([terminate, ...control.signals]);
    let result: StepResult;
    const problems = handler.validate(config);
    if (problems.length > 0) {
      result = failure('INVALID_INPUT', message('agent.invalidConfig', { step: title, problems: problems.map(bare) }), message('agent.invalidConfig.hint'));
    } else {
      result = await this.runHandler(step, abort);
    }
    if (control.unauthenticated) {
      log.error(`${step}: the run token was refused; stopping without further events`);
      return { kind: 'unauthenticated', exitCode: 4 };
    }
    if (control.runFinished && !control.operatorCancelled) {
      log.error(`${step}: the service says the run has ended; stopping without further events`);
      return { kind: 'runFinished', step, exitCode: 7 };
    }
    if (control.operatorCancelled) {
      log.warn(`${step}: cancelled by the operator`);
      await this.report(step, 'FAILED', { ...progressOf(message('agent.cancelled')), progress: this.lastProgress, detail: { code: 'CANCELLED', ...hintDetail(message('agent.cancelled.hint')) } });
      return { kind: 'cancelled', step, exitCode: 5 };
    }
    if (terminate.aborted) {
      log.warn(`${step}: stopped by a signal`);
      await this.report(step, 'FAILED', {
        ...progressOf(message('agent.terminated')),
        progress: this.lastProgress,
        detail: { code: 'TERMINATED', ...hintDetail(message('agent.terminated.hint')) },
      });
      return { kind: 'terminated', step, exitCode: 143 };
    }
    if (!result.ok) {
      const detail = this.failureDetail(result);
      log.error(`${step} failed [${result.code}]: ${result.message}`);
      await this.report(step, 'FAILED', { message: clip(result.message), ...codedOf(result), progress: this.lastProgress, detail });
      await this.sendDiagnostics(step, result, detail, terminate);
      return { kind: 'failed', step, code: result.code, exitCode: 1 };
    }
    log.info(`${step} succeeded: ${result.message}`);
    await this.report(step, 'SUCCEEDED', { message: clip(result.message), ...codedOf(result), progress: 100, ...(result.detail === undefined ? {} : { detail: result.detail }) });
    return null;
  }

  private async runHandler(step: InstallStep, signal: AbortSignal): Promise<StepResult> {
    const { registry, log } = this.deps;
    const heartbeatStop = new AbortController();
    const heartbeat = this.heartbeat(step, AbortSignal.any([signal, heartbeatStop.signal]));
    const ctx: StepContext = {
      config: this.deps.config,
      exec: this.deps.exec,
      fs: this.deps.fs,
      clock: this.deps.clock,
      api: this.deps.api,
      http: this.deps.http,
      net: this.deps.net,
      system: this.deps.system,
      artifacts: this.deps.artifacts,
      log,
      signal,
      progress: async (update: ProgressUpdate) => {
        if (!signal.aborted) {
          await this.report(step, 'PROGRESS', update);
        }
      },
    };
    try {
      return await registry[step].run(ctx);
    } catch (error) {
      if (isUnauthenticated(error)) {
        this.deps.control.tokenRefused();
      }
      if (signal.aborted) {
        return failure('CANCELLED', 'stopped', '');
      }
      const err = error as Error;
      log.error(`${step} crashed: ${err.stack ?? err.message}`);
      return failure('INTERNAL_ERROR', message('agent.crashed', { step: bare(describeStep(step).title), error: err.message }), message('agent.crashed.hint'), {
        detail: { error: err.message, stack: tailText(err.stack ?? '', 2048) },
      });
    } finally {
      heartbeatStop.abort();
      await heartbeat;
    }
  }

  /** PROGRESS with the last message when a step has said nothing for a while (and the service can hear us). */
  private async heartbeat(step: InstallStep, stop: AbortSignal): Promise<void> {
    const { clock, sender } = this.deps;
    const every = this.deps.heartbeatMs ?? 25_000;
    while (!stop.aborted) {
      await clock.sleep(1_000, stop);
      if (stop.aborted) {
        return;
      }
      const silentFor = clock.monotonic() - this.lastEventAt;
      if (silentFor >= every && sender.pendingCount === 0) {
        await this.report(step, 'PROGRESS', {
          message: this.lastMessage,
          ...(this.lastCoded ? { coded: this.lastCoded } : {}),
          progress: this.lastProgress,
          detail: { heartbeat: true, silentSeconds: Math.round(silentFor / 1000) },
        });
      }
    }
  }

  private failureDetail(result: StepFailure): JsonObject {
    const command = result.command;
    return {
      code: result.code,
      hint: result.hint,
      ...(result.hintCoded ? { hintCode: result.hintCoded.code, hintParams: result.hintCoded.params as JsonObject } : {}),
      ...(result.detail ?? {}),
      ...(command === undefined
        ? {}
        : {
            command: shortCommand(command.argv),
            exitCode: command.exitCode,
            ...(command.error === undefined ? {} : { error: command.error }),
            outputTail: tailText(command.output),
          }),
    };
  }

  /** Spools an event; false when the token has been refused or the run has ended on the service (nothing more may be sent). */
  private async report(step: InstallStep, status: StepEventStatus, update: ProgressUpdate): Promise<boolean> {
    if (this.deps.control.unauthenticated || this.deps.control.runFinished) {
      return false;
    }
    const progress = update.progress === undefined ? this.lastProgress : Math.max(0, Math.min(100, Math.round(update.progress)));
    this.lastProgress = progress;
    this.lastMessage = update.message;
    this.lastCoded = update.coded;
    this.lastEventAt = this.deps.clock.monotonic();
    const coded = update.coded ? { messageCode: update.coded.code, messageParams: update.coded.params as JsonObject } : {};
    const event = await this.deps.sender.report({ step, status, progress, message: update.message, ...coded, detail: update.detail ?? null });
    this.deps.log.debug(`event ${event.seq} ${step} ${status} ${progress}% ${update.message}`);
    return true;
  }

  private async sendDiagnostics(step: InstallStep, result: StepFailure, detail: JsonObject, terminate: AbortSignal): Promise<void> {
    const { config, exec, fs, clock, log, api } = this.deps;
    try {
      const archive = await collectDiagnostics(
        { config, agentVersion: this.deps.agentVersion, step, message: result.message, detail, hostname: this.deps.system.hostname(), ...(result.command === undefined ? {} : { command: result.command }) },
        { exec, fs, clock },
      );
      log.info(`diagnostics bundle: ${archive.length} bytes`);
      // The service takes a bundle from a failed run only: its FAILED event goes first.
      const delivered = await this.drain(terminate);
      if (delivered !== 'drained') {
        log.warn(`diagnostics not uploaded: the FAILED event was not delivered (${delivered})`);
        return;
      }
      await uploadDiagnostics(archive, { api, clock, log, timeoutMs: this.deps.drainLimitMs ?? 60 * 60_000, signal: terminate });
    } catch (error) {
      log.error(`diagnostics could not be collected: ${(error as Error).message}`);
    }
  }

  /**
   * Waits for the spool to drain: up to the long limit normally, but only
   * the short one once SIGTERM has arrived (even mid-wait).
   */
  private async drain(terminate: AbortSignal): Promise<DrainOutcome> {
    const { sender, clock, log } = this.deps;
    const limit = this.deps.drainLimitMs ?? 60 * 60_000;
    const afterSignal = this.deps.terminateDrainLimitMs ?? 5_000;
    const start = clock.monotonic();
    let signalledAt: number | null = terminate.aborted ? start : null;
    if (signalledAt !== null) {
      sender.retryNow();
    }
    if (sender.pendingCount > 0) {
      log.info(`waiting up to ${Math.round((signalledAt === null ? limit : afterSignal) / 1000)} s for ${sender.pendingCount} event(s) to be delivered`);
    }
    for (;;) {
      const outcome = await sender.drain(1_000);
      if (outcome !== 'timeout') {
        return outcome;
      }
      const now = clock.monotonic();
      if (terminate.aborted && signalledAt === null) {
        signalledAt = now;
        sender.retryNow();
      }
      if (now - start >= limit || (signalledAt !== null && now - signalledAt >= afterSignal)) {
        return 'timeout';
      }
    }
  }

  private async finish(outcome: RunOutcome, terminate: AbortSignal): Promise<RunOutcome> {
    const { sender, log } = this.deps;
    if (outcome.kind === 'unauthenticated' || outcome.kind === 'runFinished') {
      await sender.stop();
      return outcome;
    }
    const drained = await this.drain(terminate);
    await sender.stop();
    if (drained === 'unauthenticated') {
      return { kind: 'unauthenticated', exitCode: 4 };
    }
    if (drained === 'finished' && outcome.kind === 'succeeded') {
      // The service ended the run (its deadline, a retry) before it heard the last step.
      return { kind: 'runFinished', step: null, exitCode: 7 };
    }
    if (drained === 'timeout') {
      log.error(`${sender.pendingCount} event(s) not delivered; they stay in the spool for the next start`);
      if (outcome.kind === 'succeeded') {
        return { kind: 'succeeded', exitCode: 6 };
      }
    }
    return outcome;
  }
}

/** A hint in an event's detail: the English text, and its code and parameters for the console. */
function hintDetail(hint: CodedText): JsonObject {
  return { hint: hint.message, hintCode: hint.code, hintParams: hint.params as JsonObject };
}

/** The coded message of a step result, when it has one (a clipped English text keeps its code: the console formats from the code). */
function codedOf(result: { readonly coded?: Message }): { coded?: Message } {
  return result.coded ? { coded: result.coded } : {};
}
