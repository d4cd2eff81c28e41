import { isUnauthenticated, type AgentRun } from '@ccos/agent/data-access-api';
import { describeExit, exitMessage, sha256Of, succeeded, tailText, type CommandResult, type JsonObject } from '@ccos/agent/util-host';
import { RUNNING_KEY, WRITTEN_FILES_KEY, describeStep } from '@ccos/shared/domain';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import { diagnose } from '../failure-codes';
import { BootstrapKubeconfigError, bootstrapKubeconfigPath, withBootstrapToken } from '../kubelet/bootstrap-kubeconfig';
import { readRunningKubelet } from '../kubelet/running-kubelet';
import { failure, progressOf, success, withEvidence, type StepContext, type StepFailure, type StepHandler, type StepResult } from '../step-handler';

/** How often the service is asked about the Node. */
export const POLL_INTERVAL_MS = 2_000;
/** A PROGRESS event at least this often, even when nothing changes (the service marks silent runs STALLED at 30 s+). */
export const HEARTBEAT_MS = 25_000;
/** Restarts of kubelet since we started it that mean "crash loop", not "one hiccup". */
const CRASH_LOOP_RESTARTS = 2;

interface Phase {
  readonly key: string;
  readonly message: CodedText;
  /** What the run waits for, as a timeout names it (the message without "kubelet started"). */
  readonly waitingFor: CodedText;
  readonly progress: number;
}

/** What the run is waiting for, as the operator should read it. */
export function phaseOf(run: AgentRun | null): Phase {
  if (run === null) {
    return { key: 'unknown', message: message('agent.kubelet.waitingService'), waitingFor: message('agent.kubelet.forService'), progress: 10 };
  }
  if (run.nodeReady) {
    const ready = message('agent.kubelet.ready', { node: run.nodeName });
    return { key: 'ready', message: ready, waitingFor: ready, progress: 100 };
  }
  if (run.pendingCsrNames.length > 0) {
    const waiting = message('agent.kubelet.waitingCsrs', { count: run.pendingCsrNames.length, csrs: run.pendingCsrNames.join(', ') });
    return { key: `csr:${[...run.pendingCsrNames].sort().join(',')}`, message: waiting, waitingFor: waiting, progress: run.nodeRegistered ? 70 : 30 };
  }
  if (!run.nodeRegistered) {
    return { key: 'unregistered', message: message('agent.kubelet.waitingRegister'), waitingFor: message('agent.kubelet.forRegister'), progress: 20 };
  }
  const waiting = message('agent.kubelet.waitingReady');
  return { key: 'registered', message: waiting, waitingFor: waiting, progress: 80 };
}

/**
 * START_KUBELET: hands kubelet the run's own bootstrap identity (its token into the bootstrap
 * kubeconfig that kubelet.service names, replacing the Ignition's shared credential, 0600),
 * `systemctl enable --now kubelet` (a restart when the token was written, so a kubelet left
 * running by an earlier run reads it, and in an apply run, so it runs what the run wrote), then watch through the service (agentRun) while kubelet
 * bootstraps: CSRs pending, Node registered, Node Ready (then records the kernel and the running
 * kubelet's version and flags). Fails when kubelet dies (with its
 * journal) or when the Node is not Ready within `timeouts.nodeReadySeconds`.
 */
export class StartKubeletStep implements StepHandler {
  readonly step = 'START_KUBELET' as const;

  validate(): CodedText[] {
    return [];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const token = ctx.config.kubeletBootstrapToken;
    const written: Record<string, string> = {};
    if (token !== null) {
      const handed = await this.handBootstrapIdentity(ctx, token);
      if ('ok' in handed) {
        return handed;
      }
      written[handed.path] = handed.sha256;
    }
    // A restart when kubelet must read what this run wrote: its new token, or an apply run's files.
    const restart = token !== null || ctx.config.purpose === 'APPLY';
    const commands = restart ? [['systemctl', 'enable', 'kubelet'], ['systemctl', 'restart', 'kubelet']] : [['systemctl', 'enable', '--now', 'kubelet']];
    for (const argv of commands) {
      const started = await ctx.exec.run(argv, { timeoutMs: 180_000 });
      if (!succeeded(started)) {
        return this.kubeletFailure(ctx, 'KUBELET_START_FAILED', message('agent.kubelet.startFailed', { command: argv.join(' '), exit: bare(exitMessage(started)) }), started);
      }
    }
    const baseline = await this.restarts(ctx);
    const begin = ctx.clock.monotonic();
    const limitMs = ctx.config.timeouts.nodeReadySeconds * 1000;
    let phase = phaseOf(null);
    let lastReportAt = -Infinity;
    let lastRun: AgentRun | null = null;
    let serviceError: string | null = null;
    let readyPolls = 0;
    for (;;) {
      if (ctx.signal.aborted) {
        return failure('CANCELLED', message('agent.kubelet.stoppedWaiting'), '');
      }
      const state = await this.kubeletState(ctx);
      if (state.dead || (state.restarts !== null && baseline !== null && state.restarts - baseline >= CRASH_LOOP_RESTARTS)) {
        const how = state.dead
          ? message('agent.kubelet.inactive', { state: state.active })
          : state.restarts === null || baseline === null
            ? message('agent.kubelet.restartedRepeatedly')
            : message('agent.kubelet.restarted', { count: state.restarts - baseline });
        return this.kubeletFailure(ctx, 'KUBELET_DIED', message('agent.kubelet.died', { how: bare(how) }), null);
      }
      try {
        lastRun = (await ctx.api.agentRun(ctx.signal)).run;
        serviceError = null;
      } catch (error) {
        if (isUnauthenticated(error) || ctx.signal.aborted) {
          throw error;
        }
        serviceError = (error as Error).message;
        ctx.log.warn(`agentRun: ${serviceError}`);
      }
      const next = phaseOf(lastRun);
      // A joined node's Node was Ready before the restart: an apply run sees kubelet stay up for one more poll first.
      readyPolls = next.key === 'ready' ? readyPolls + 1 : 0;
      if (next.key === 'ready' && readyPolls >= (ctx.config.purpose === 'APPLY' ? 2 : 1)) {
        return success(lastRun !== null && lastRun.pendingCsrNames.length > 0 ? message('agent.kubelet.readyStillPending', { node: lastRun.nodeName, csrs: lastRun.pendingCsrNames.join(', ') }) : next.message, {
          nodeName: lastRun?.nodeName ?? ctx.config.nodeName,
          waitedSeconds: Math.round((ctx.clock.monotonic() - begin) / 1000),
          pendingCsrNames: [...(lastRun?.pendingCsrNames ?? [])],
          [WRITTEN_FILES_KEY]: written,
          [RUNNING_KEY]: await this.running(ctx),
        });
      }
      const elapsed = ctx.clock.monotonic() - begin;
      if (elapsed >= limitMs) {
        return this.kubeletFailure(
          ctx,
          'NODE_READY_TIMEOUT',
          message('agent.kubelet.notReady', { seconds: String(ctx.config.timeouts.nodeReadySeconds), waitingFor: bare(phase.waitingFor) }),
          null,
          lastRun !== null && lastRun.pendingCsrNames.length > 0 ? message('agent.kubelet.pendingCsrs.hint', { csrs: lastRun.pendingCsrNames.join(', ') }) : undefined,
        );
      }
      if ((next.key !== phase.key && next.key !== 'ready') || ctx.clock.monotonic() - lastReportAt >= HEARTBEAT_MS) {
        phase = next;
        lastReportAt = ctx.clock.monotonic();
        await ctx.progress({
          ...progressOf(serviceError === null ? phase.message : message('agent.kubelet.serviceNotAnswering', { phase: bare(phase.message), error: serviceError })),
          progress: phase.progress,
          detail: {
            kubelet: state.active,
            nodeRegistered: lastRun?.nodeRegistered ?? false,
            nodeReady: false,
            pendingCsrNames: [...(lastRun?.pendingCsrNames ?? [])],
            waitedSeconds: Math.round(elapsed / 1000),
          },
        });
      }
      await ctx.clock.sleep(POLL_INTERVAL_MS, ctx.signal);
    }
  }

  private async running(ctx: StepContext): Promise<JsonObject> {
    const { kernelRelease, kubeletVersion, kubeletFlags } = await readRunningKubelet(ctx.exec, ctx.fs);
    return { kernelRelease, kubeletVersion, kubeletFlags: [...kubeletFlags] };
  }

  /** Writes the run's token into kubelet's bootstrap kubeconfig: the file and its new SHA-256, or a failure result when it cannot. */
  private async handBootstrapIdentity(ctx: StepContext, token: string): Promise<StepFailure | { readonly path: string; readonly sha256: string }> {
    const hint = message('agent.kubelet.identity.hint');
    const unit = await ctx.exec.run(['systemctl', 'cat', 'kubelet'], { timeoutMs: 30_000 });
    if (!succeeded(unit)) {
      return failure('KUBELET_BOOTSTRAP_KUBECONFIG', message('agent.kubelet.unitUnreadable', { exit: bare(exitMessage(unit)) }), hint, { command: unit });
    }
    const path = bootstrapKubeconfigPath(unit.stdout);
    if (path === null) {
      return failure('KUBELET_BOOTSTRAP_KUBECONFIG', message('agent.kubelet.noBootstrapFlag'), hint);
    }
    const existing = await ctx.fs.readFile(path).then((data) => data.toString('utf8'), () => null);
    if (existing === null) {
      return failure('KUBELET_BOOTSTRAP_KUBECONFIG', message('agent.kubelet.noBootstrapFile', { path }), hint, { detail: { path } });
    }
    let updated: string;
    try {
      updated = withBootstrapToken(existing, token);
    } catch (error) {
      if (error instanceof BootstrapKubeconfigError) {
        return failure('KUBELET_BOOTSTRAP_KUBECONFIG', message('agent.kubelet.badBootstrapFile', { path, error: error.coded }), hint, { detail: { path } });
      }
      throw error;
    }
    await ctx.fs.writeFileAtomic(path, updated, { mode: 0o600, sync: true });
    await ctx.progress({ ...progressOf(message('agent.kubelet.ownIdentity', { path })), progress: 5, detail: { bootstrapKubeconfig: path } });
    return { path, sha256: sha256Of(updated) };
  }

  private async kubeletState(ctx: StepContext): Promise<{ active: string; dead: boolean; restarts: number | null }> {
    const result = await ctx.exec.run(['systemctl', 'is-active', 'kubelet'], { timeoutMs: 30_000 });
    const active = result.stdout.trim() || describeExit(result);
    const dead = active === 'failed' || active === 'inactive';
    return { active, dead, restarts: active === 'active' && !dead ? null : await this.restarts(ctx) };
  }

  private async restarts(ctx: StepContext): Promise<number | null> {
    const result = await ctx.exec.run(['systemctl', 'show', 'kubelet', '-p', 'NRestarts', '--value'], { timeoutMs: 30_000 });
    const value = Number(result.stdout.trim());
    return succeeded(result) && Number.isInteger(value) && result.stdout.trim() !== '' ? value : null;
  }

  /** A failure carrying kubelet's journal tail, diagnosed into a known code when it says why. */
  private async kubeletFailure(ctx: StepContext, code: 'KUBELET_START_FAILED' | 'KUBELET_DIED' | 'NODE_READY_TIMEOUT', said: CodedText, command: CommandResult | null, hint?: CodedText): Promise<StepResult> {
    const journal = await ctx.exec.run(['journalctl', '-u', 'kubelet', '-n', '200', '--no-pager'], { timeoutMs: 30_000 });
    const text = `${command?.output ?? ''}\n${journal.stdout}`;
    const fallbackHint = hint ?? message('agent.kubelet.journal.hint', { stepHint: bare(describeStep(this.step).hint) });
    const found = code === 'NODE_READY_TIMEOUT' && hint !== undefined ? { code, hint, evidence: null } : diagnose(this.step, text, { code, hint: fallbackHint });
    return failure(
      found.code,
      withEvidence(said, found.evidence),
      found.hint,
      {
        detail: { journalTail: tailText(journal.stdout), journalCommand: 'journalctl -u kubelet -n 200 --no-pager', ...(found.code === code ? {} : { symptom: code }) },
        ...(command === null ? {} : { command }),
      },
    );
  }
}
