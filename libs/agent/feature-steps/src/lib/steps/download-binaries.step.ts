import type { Artifact, ArtifactManifest } from '@ccos/agent/data-access-api';
import { REQUIRED_BINARIES, WRITTEN_FILES_KEY } from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import { ArtifactKindStep, downloadBatch } from '../artifact-batch';
import { HOST_PATHS } from '../host-paths';
import { failure, success, type StepContext, type StepResult } from '../step-handler';
import { formatBytes } from './preflight-checks';

export { REQUIRED_BINARIES } from '@ccos/shared/domain';

/**
 * DOWNLOAD_BINARIES: every `binary` artifact of the manifest to
 * /usr/local/bin/<name> (0755), resumable and sha256-verified; files
 * already there with the right checksum are kept.
 */
export class DownloadBinariesStep extends ArtifactKindStep {
  readonly step = 'DOWNLOAD_BINARIES' as const;
  protected readonly kind = 'binary';

  protected async runOn(ctx: StepContext, binaries: Artifact[], manifest: ArtifactManifest): Promise<StepResult> {
    const missing = REQUIRED_BINARIES.filter((name) => !binaries.some((artifact) => artifact.name === name));
    if (missing.length > 0) {
      return failure(
        'ARTIFACT_MISSING',
        message('agent.binaries.missing', { version: manifest.version || bare(message('agent.versionUnknown')), names: missing.join(', ') }),
        message('agent.binaries.missing.hint'),
        { detail: { missing: [...missing], manifestVersion: manifest.version } },
      );
    }
    await ctx.fs.mkdir(HOST_PATHS.binDir);
    const batch = await downloadBatch(ctx, binaries, {
      destination: (artifact) => `${HOST_PATHS.binDir}/${artifact.name}`,
      mode: 0o755,
      progressRange: [0, 100],
      noun: 'binary',
    });
    if ('ok' in batch) {
      return batch;
    }
    return success(
      message('agent.binaries.done', { count: binaries.length, dir: HOST_PATHS.binDir, size: formatBytes(batch.bytes), received: formatBytes(batch.received) }),
      {
        manifestVersion: manifest.version, manifestSha256: ctx.config.artifactManifestSha256, bytes: batch.bytes, total: batch.bytes, received: batch.received, files: batch.files,
        // Each was checked against the manifest's hash as it was written.
        [WRITTEN_FILES_KEY]: Object.fromEntries(binaries.map((artifact) => [`${HOST_PATHS.binDir}/${artifact.name}`, artifact.sha256])),
      },
    );
  }
}
