import { sha256Of, type JsonObject } from '@ccos/agent/util-host';
import { WRITTEN_FILES_KEY } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import type { AgentConfig } from '../agent-config';
import { HOST_PATHS } from '../host-paths';
import { ApplyError, applyIgnitionPlan } from '../ignition/ignition-applier';
import { IgnitionError, planIgnition } from '../ignition/ignition-config';
import { kubeletExtraArgs, kubeletSysconfig, refusedKubeletLabels } from '../ignition/kubelet-extra-args';
import { fetchWorkerConfig } from '../ignition/machine-config-fetch';
import { failure, progressOf, success, type StepContext, type StepHandler, type StepResult } from '../step-handler';

/**
 * APPLY_IGNITION: fetches the worker config from the machine config server
 * at https://<VIP>:22623/config/worker, applies its directories, files,
 * links and systemd units, and writes the node's labels and taints into
 * /etc/sysconfig/kubelet (KUBELET_EXTRA_ARGS) — a file, never a shell line.
 */
export class ApplyIgnitionStep implements StepHandler {
  readonly step = 'APPLY_IGNITION' as const;

  validate(config: AgentConfig): CodedText[] {
    const refused = refusedKubeletLabels(config.labels);
    return refused.length === 0 ? [] : [message('agent.ignition.refusedLabels', { labels: refused.join(', ') })];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const systemCas = ctx.config.machineConfigCaCert === null;
    await ctx.progress({ ...progressOf(message('agent.ignition.fetching', { url: `https://${ctx.config.vip}:22623/config/worker`, systemCas })), progress: 10 });
    const fetched = await fetchWorkerConfig(ctx);
    if ('ok' in fetched) {
      return fetched;
    }
    let plan;
    try {
      plan = planIgnition(fetched.document);
    } catch (error) {
      if (error instanceof IgnitionError) {
        return failure(error.code, message('agent.ignition.invalid', { error: error.message }), message('agent.ignition.invalid.hint'), {
          detail: { fetch: fetched.status as unknown as JsonObject },
        });
      }
      throw error;
    }
    await ctx.progress({
      ...progressOf(message('agent.ignition.applying', {
        version: fetched.version, directories: plan.directories.length, files: plan.files.length, links: plan.links.length, units: plan.units.length,
      })),
      progress: 40,
    });
    let applied;
    try {
      applied = await applyIgnitionPlan(plan, ctx.fs, ctx.exec);
    } catch (error) {
      if (error instanceof ApplyError) {
        return failure('IGNITION_APPLY_FAILED', message('agent.ignition.applyFailed', { error: error.message }), message('agent.ignition.applyFailed.hint'), {
          detail: { path: error.path },
          ...(error.command === undefined ? {} : { command: error.command }),
        });
      }
      const err = error as NodeJS.ErrnoException;
      if (err.code !== undefined && err.path !== undefined) {
        return failure(err.code === 'ENOSPC' ? 'DISK_FULL' : 'IGNITION_APPLY_FAILED', message('agent.ignition.applyFailedAt', { path: err.path, error: err.message }), message('agent.ignition.applyFailedAt.hint'), {
          detail: { path: err.path, errno: err.code },
        });
      }
      throw error;
    }
    const existing = await ctx.fs.readFile(HOST_PATHS.kubeletSysconfig).then((data) => data.toString('utf8'), () => null);
    await ctx.fs.mkdir('/etc/sysconfig');
    const sysconfig = kubeletSysconfig(existing, ctx.config.labels, ctx.config.taints, ctx.config.providerId);
    await ctx.fs.writeFileAtomic(HOST_PATHS.kubeletSysconfig, sysconfig, { mode: 0o644, sync: true });
    const extraArgs = kubeletExtraArgs(ctx.config.labels, ctx.config.taints, ctx.config.providerId);
    const changed = applied.files.filter((file) => file.changed === true).length;
    return success(
      message('agent.ignition.applied', {
        version: fetched.version, files: applied.files.length, changed, directories: applied.directories.length, units: applied.units.length, skipped: plan.skipped.length > 0 ? plan.skipped.join(', ') : 'none', systemCas,
      }),
      {
        url: fetched.status.url,
        status: fetched.status.status,
        contentType: fetched.status.contentType,
        bytes: fetched.status.bytes,
        ignitionVersion: fetched.version,
        caSource: fetched.status.caSource,
        directories: applied.directories,
        files: applied.files,
        links: applied.links,
        units: applied.units,
        skipped: [...plan.skipped],
        kubeletExtraArgs: extraArgs,
        [WRITTEN_FILES_KEY]: { ...applied.written, [HOST_PATHS.kubeletSysconfig]: sha256Of(sysconfig) },
      },
    );
  }
}
