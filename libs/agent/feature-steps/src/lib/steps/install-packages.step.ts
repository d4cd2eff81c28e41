import type { Artifact } from '@ccos/agent/data-access-api';
import { exitMessage, succeeded, type CommandResult } from '@ccos/agent/util-host';
import { describeStep } from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import { ArtifactKindStep, downloadBatch } from '../artifact-batch';
import { diagnose } from '../failure-codes';
import { statePaths } from '../host-paths';
import { failure, progressOf, success, withEvidence, type StepContext, type StepResult } from '../step-handler';

/** A package transaction is never interrupted (a half-done rpm transaction is worse than a late cancel). */
const TRANSACTION_TIMEOUT_MS = 60 * 60_000;

/**
 * INSTALL_PACKAGES: the `rpm` artifacts, installed in ONE `dnf install -y`
 * transaction so their dependencies resolve among themselves. When `rpm -q`
 * says every package is installed already, nothing is downloaded or
 * reinstalled.
 */
export class InstallPackagesStep extends ArtifactKindStep {
  readonly step = 'INSTALL_PACKAGES' as const;
  protected readonly kind = 'rpm';

  protected async runOn(ctx: StepContext, rpms: Artifact[]): Promise<StepResult> {
    if (rpms.length === 0) {
      return success(message('agent.packages.none'), { packages: 0 });
    }
    // Published rpm file names are name-version-release.arch.rpm: ask rpm before downloading anything.
    const byFileName = await this.allInstalled(ctx, rpms.map((rpm) => rpm.name.replace(/\.rpm$/, '')));
    if (byFileName) {
      return success(message('agent.packages.present', { count: rpms.length }), { packages: rpms.length, installed: false });
    }
    const dir = statePaths(ctx.config.stateDir).rpms;
    await ctx.fs.mkdir(dir, { mode: 0o700 });
    const batch = await downloadBatch(ctx, rpms, {
      destination: (rpm) => `${dir}/${rpm.name}`,
      mode: 0o644,
      progressRange: [0, 60],
      noun: 'rpm',
      // Read by dnf at once and deleted after: no fsync per file (each is checked by sha256 when used).
      durable: false,
    });
    if ('ok' in batch) {
      return batch;
    }
    const files = rpms.map((rpm) => `${dir}/${rpm.name}`);
    const query = await ctx.exec.run(['rpm', '-qp', '--qf', '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n', ...files], { timeoutMs: 120_000 });
    if (succeeded(query) && (await this.allInstalled(ctx, query.stdout.split('\n').map((line) => line.trim()).filter(Boolean)))) {
      await ctx.fs.remove(dir);
      return success(message('agent.packages.present', { count: rpms.length }), { packages: rpms.length, installed: false, downloaded: batch.files });
    }
    await ctx.progress({ ...progressOf(message('agent.packages.installing', { count: rpms.length })), progress: 60, detail: { packages: rpms.length } });
    let result = await this.install(ctx, 'dnf', files);
    if (result.error === 'ENOENT') {
      result = await this.install(ctx, 'yum', files);
    }
    if (result.error === 'ENOENT') {
      return failure('PACKAGE_TOOL_MISSING', message('agent.packages.noTool'), message('agent.packages.noTool.hint'), { command: result });
    }
    if (!succeeded(result)) {
      const found = diagnose(this.step, result.output, { code: 'PACKAGE_INSTALL_FAILED', hint: describeStep(this.step).hint });
      return failure(
        found.code,
        withEvidence(message('agent.packages.failed', { tool: result.argv[0] ?? 'dnf', count: rpms.length, exit: bare(exitMessage(result)) }), found.evidence),
        found.hint,
        { command: result, detail: { packages: rpms.length, files: rpms.map((rpm) => rpm.name) } },
      );
    }
    await ctx.fs.remove(dir);
    return success(message('agent.packages.installed', { count: rpms.length, tool: result.argv[0] }), {
      packages: rpms.length,
      installed: true,
      tool: result.argv[0] ?? 'dnf',
      durationMs: result.durationMs,
    });
  }

  private install(ctx: StepContext, tool: 'dnf' | 'yum', files: readonly string[]): Promise<CommandResult> {
    return ctx.exec.run([tool, 'install', '-y', ...files], { timeoutMs: TRANSACTION_TIMEOUT_MS });
  }

  private async allInstalled(ctx: StepContext, packages: readonly string[]): Promise<boolean> {
    if (packages.length === 0) {
      return false;
    }
    const result = await ctx.exec.run(['rpm', '-q', ...packages], { timeoutMs: 120_000 });
    return succeeded(result);
  }
}
