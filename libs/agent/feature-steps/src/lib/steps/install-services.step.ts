import type { Artifact } from '@ccos/agent/data-access-api';
import { exitMessage, succeeded, type JsonObject } from '@ccos/agent/util-host';
import { WRITTEN_FILES_KEY, describeStep } from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import { ArtifactKindStep, downloadBatch } from '../artifact-batch';
import { diagnose } from '../failure-codes';
import { HOST_PATHS, statePaths } from '../host-paths';
import { failure, progressOf, success, withEvidence, type StepContext, type StepResult } from '../step-handler';

/** A systemd unit file name (no path, a known unit type). */
export const UNIT_NAME = /^[A-Za-z0-9:_.@\\-]{1,200}\.(service|socket|timer|target|path|mount|automount|slice)$/;

/**
 * INSTALL_SERVICES: the `unit` artifacts into /etc/systemd/system (only
 * rewritten when their contents differ), `systemctl daemon-reload`,
 * `systemctl enable` them. Nothing is started here: kubelet starts in
 * START_KUBELET, once Ignition has written its configuration.
 */
export class InstallServicesStep extends ArtifactKindStep {
  readonly step = 'INSTALL_SERVICES' as const;
  protected readonly kind = 'unit';

  protected async runOn(ctx: StepContext, units: Artifact[]): Promise<StepResult> {
    const badNames = units.filter((unit) => !UNIT_NAME.test(unit.name)).map((unit) => unit.name);
    if (badNames.length > 0) {
      return failure('MANIFEST_INVALID', message('agent.units.badNames', { names: badNames.join(', ') }), message('agent.units.badNames.hint'));
    }
    if (units.length === 0) {
      return success(message('agent.units.none'), { units: [] });
    }
    const dir = statePaths(ctx.config.stateDir).units;
    await ctx.fs.mkdir(dir, { mode: 0o700 });
    const batch = await downloadBatch(ctx, units, { destination: (unit) => `${dir}/${unit.name}`, mode: 0o644, progressRange: [0, 50], noun: 'unit' });
    if ('ok' in batch) {
      return batch;
    }
    await ctx.fs.mkdir(HOST_PATHS.systemdDir);
    const installed: JsonObject[] = [];
    const written: Record<string, string> = {};
    for (const unit of units) {
      const target = `${HOST_PATHS.systemdDir}/${unit.name}`;
      const contents = await ctx.fs.readFile(`${dir}/${unit.name}`);
      const current = await ctx.fs.readFile(target).catch(() => null);
      const changed = current === null || !current.equals(contents);
      if (changed) {
        await ctx.fs.writeFileAtomic(target, contents, { mode: 0o644, sync: true });
      }
      installed.push({ name: unit.name, path: target, changed });
      written[target] = unit.sha256;
    }
    await ctx.progress({ ...progressOf(message('agent.units.reloading', { count: units.length })), progress: 70 });
    const reload = await ctx.exec.run(['systemctl', 'daemon-reload'], { timeoutMs: 120_000 });
    if (!succeeded(reload)) {
      const found = diagnose(this.step, reload.output, { code: 'SYSTEMCTL_FAILED', hint: describeStep(this.step).hint });
      return failure(found.code, message('agent.units.reloadFailed', { exit: bare(exitMessage(reload)) }), found.hint, { command: reload });
    }
    const names = units.map((unit) => unit.name);
    const enable = await ctx.exec.run(['systemctl', 'enable', ...names], { timeoutMs: 120_000 });
    if (!succeeded(enable)) {
      const found = diagnose(this.step, enable.output, { code: 'UNIT_REJECTED', hint: describeStep(this.step).hint });
      return failure(found.code, withEvidence(message('agent.units.enableFailed', { units: names.join(' '), exit: bare(exitMessage(enable)) }), found.evidence), found.hint, { command: enable });
    }
    return success(message('agent.units.enabled', { units: names.join(', ') }), { units: installed, enabled: names, [WRITTEN_FILES_KEY]: written });
  }
}
