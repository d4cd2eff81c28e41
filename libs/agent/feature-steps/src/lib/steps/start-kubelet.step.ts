import { bare, type CodedText, message } from '@ccos/shared/messages';
import { isUnauthenticated, type AgentRun } from '@ccos/agent/data-access-api';
import { describeExit, succeeded, tailText, type CommandResult } from '@ccos/agent/util-host';
import { describeStep } from '@ccos/shared/domain';
import { diagnose } from '../failure-codes';
import { BootstrapKubeconfigError, bootstrapKubeconfigPath, withBootstrapToken } from '../kubelet/bootstrap-kubeconfig';
import { failure, progressOf, success, type StepContext, type StepHandler, type StepResult } from '../step-handler';

/** How often the service is asked about the Node. */
export const POLL_INTERVAL_MS = 2_000;
/** A PROGRESS event at least this often, even when nothing changes (the service marks silent runs STALLED at 30 s+). */
export const HEARTBEAT_MS = 25_000;
/** Restarts of kubelet since we started it that mean "crash loop", not "one hiccup". */
const CRASH_LOOP_RESTARTS = 2;

interface Phase {
  readonly key: string;
  readonly message: CodedText;
  readonly progress: number;
}

/** What the run is waiting for, as the operator should read it. */
export function phaseOf(run: AgentRun | null): Phase {
  if (run === null) {
    return { key: 'unknown', message: message('agent.kubelet.waitingService'), progress: 10 };
  }
  if (run.nodeReady) {
    return { key: 'ready', message: message('agent.kubelet.ready', { node: run.nodeName }), progress: 100 };
  }
  if (run.pendingCsrNames.length > 0) {
    return {
      key: `csr:${[...run.pendingCsrNames].sort().join(',')}`,
      message: message('agent.kubelet.waitingCsrs', { count: run.pendingCsrNames.length, csrs: run.pendingCsrNames.join(', ') }),
      progress: run.nodeRegistered ? 70 : 30,
    };
  }
  if (!run.nodeRegistered) {
    return { key: 'unregistered', message: message('agent.kubelet.waitingRegister'), progress: 20 };
  }
  return { key: 'registered', message: message('agent.kubelet.waitingReady'), progress: 80 };
}

/**
 * START_KUBELET: hands kubelet the run's own bootstrap identity (its token into the bootstrap
 * kubeconfig that kubelet.service names, replacing the Ignition's shared credential, 0600),
 * `systemctl enable --now kubelet` (a restart when the token was written, so a kubelet left
 * running by an earlier run reads it), then watch through the service (agentRun) while kubelet
 * bootstraps: CSRs pending, Node registered, Node Ready. Fails when kubelet dies (with its
 * journal) or when the Node is not Ready within `timeouts.nodeReadySeconds`.
 */
export class StartKubeletStep implements StepHandler {
  readonly step = 'START_KUBELET' as const;

  validate(): string[] {
    return [];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const token = ctx.config.kubeletBootstrapToken;
    if (token !== null) {
      const handed = await this.handBootstrapIdentity(ctx, token);
      if (handed !== null) {
        return handed;
      }
    }
    const commands = token === null ? [['systemctl', 'enable', '--now', 'kubelet']] : [['systemctl', 'enable', 'kubelet'], ['systemctl', 'restart', 'kubelet']];
    for (const argv of commands) {
      const started = await ctx.exec.run(argv, { timeoutMs: 180_000 });
      if (!succeeded(started)) {
        return this.kubeletFailure(ctx, 'KUBELET_START_FAILED', `${argv.join(' ')} failed: ${describeExit(started)}`, started);
      }
    }
    const baseline = await this.restarts(ctx);
    const begin = ctx.clock.monotonic();
    const limitMs = ctx.config.timeouts.nodeReadySeconds * 1000;
    let phase = phaseOf(null);
    let lastReportAt = -Infinity;
    let lastRun: AgentRun | null = null;
    let serviceError: string | null = null;
    for (;;) {
      if (ctx.signal.aborted) {
        return failure('CANCELLED', 'stopped while waiting for the Node', '');
      }
      const state = await this.kubeletState(ctx);
      if (state.dead || (state.restarts !== null && baseline !== null && state.restarts - baseline >= CRASH_LOOP_RESTARTS)) {
        const how = state.dead ? `systemctl is-active kubelet: ${state.active}` : `kubelet restarted ${state.restarts === null || baseline === null ? 'repeatedly' : state.restarts - baseline} times`;
        return this.kubeletFailure(ctx, 'KUBELET_DIED', `kubelet is not running (${how})`, null);
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
      if (next.key === 'ready') {
        return success(lastRun !== null && lastRun.pendingCsrNames.length > 0 ? message('agent.kubelet.readyStillPending', { node: lastRun.nodeName, csrs: lastRun.pendingCsrNames.join(', ') }) : next.message, {
          nodeName: lastRun?.nodeName ?? ctx.config.nodeName,
          waitedSeconds: Math.round((ctx.clock.monotonic() - begin) / 1000),
          pendingCsrNames: [...(lastRun?.pendingCsrNames ?? [])],
        });
      }
      const elapsed = ctx.clock.monotonic() - begin;
      if (elapsed >= limitMs) {
        const waitingFor = phase.message.message.replace(/^kubelet started; /, '');
        return this.kubeletFailure(
          ctx,
          'NODE_READY_TIMEOUT',
          `the Node was not Ready after ${ctx.config.timeouts.nodeReadySeconds} s; ${waitingFor}`,
          null,
          lastRun !== null && lastRun.pendingCsrNames.length > 0
            ? `Approve the node's pending CSRs (${lastRun.pendingCsrNames.join(', ')}) in the console or with \`oc adm certificate approve\`, or turn on auto-approval for the cluster.`
            : undefined,
        );
      }
      if (next.key !== phase.key || ctx.clock.monotonic() - lastReportAt >= HEARTBEAT_MS) {
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

  /** Writes the run's token into kubelet's bootstrap kubeconfig; a failure result when it cannot. */
  private async handBootstrapIdentity(ctx: StepContext, token: string): Promise<StepResult | null> {
    const hint = 'APPLY_IGNITION writes kubelet.service and its bootstrap kubeconfig: check the worker config, then retry from APPLY_IGNITION.';
    const unit = await ctx.exec.run(['systemctl', 'cat', 'kubelet'], { timeoutMs: 30_000 });
    if (!succeeded(unit)) {
      return failure('KUBELET_BOOTSTRAP_KUBECONFIG', `cannot read kubelet.service to find its bootstrap kubeconfig: ${describeExit(unit)}`, hint, { command: unit });
    }
    const path = bootstrapKubeconfigPath(unit.stdout);
    if (path === null) {
      return failure('KUBELET_BOOTSTRAP_KUBECONFIG', 'kubelet.service names no --bootstrap-kubeconfig, so kubelet cannot be given this run\'s bootstrap identity', hint);
    }
    const existing = await ctx.fs.readFile(path).then((data) => data.toString('utf8'), () => null);
    if (existing === null) {
      return failure('KUBELET_BOOTSTRAP_KUBECONFIG', `kubelet's bootstrap kubeconfig ${path} (named by kubelet.service) does not exist`, hint, { detail: { path } });
    }
    let updated: string;
    try {
      updated = withBootstrapToken(existing, token);
    } catch (error) {
      if (error instanceof BootstrapKubeconfigError) {
        return failure('KUBELET_BOOTSTRAP_KUBECONFIG', `kubelet's bootstrap kubeconfig ${path} cannot be given this run's bootstrap identity: ${error.message}`, hint, { detail: { path } });
      }
      throw error;
    }
    await ctx.fs.writeFileAtomic(path, updated, { mode: 0o600, sync: true });
    await ctx.progress({ ...progressOf(message('agent.kubelet.ownIdentity', { path })), progress: 5, detail: { bootstrapKubeconfig: path } });
    return null;
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
  private async kubeletFailure(ctx: StepContext, code: 'KUBELET_START_FAILED' | 'KUBELET_DIED' | 'NODE_READY_TIMEOUT', message: string, command: CommandResult | null, hint?: string): Promise<StepResult> {
    const journal = await ctx.exec.run(['journalctl', '-u', 'kubelet', '-n', '200', '--no-pager'], { timeoutMs: 30_000 });
    const text = `${command?.output ?? ''}\n${journal.stdout}`;
    const fallbackHint = hint ?? `${describeStep(this.step).hint.message} Seed troubleshooting: NotReady → \`journalctl -u kubelet -f\`, check kubelet ↔ API communication.`;
    const found = code === 'NODE_READY_TIMEOUT' && hint !== undefined ? { code, hint, evidence: null } : diagnose(this.step, text, { code, hint: fallbackHint });
    return failure(
      found.code,
      `${message}${found.evidence === null ? '' : ` — ${found.evidence}`}`,
      found.hint,
      {
        detail: { journalTail: tailText(journal.stdout), journalCommand: 'journalctl -u kubelet -n 200 --no-pager', ...(found.code === code ? {} : { symptom: code }) },
        ...(command === null ? {} : { command }),
      },
    );
  }
}
