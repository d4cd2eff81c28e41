import {
  ApiError, DownloadError, MANIFEST_MISMATCH, isTransient, isUnauthenticated,
  type Artifact, type ArtifactKind, type ArtifactManifest, type DownloadResult,
} from '@ccos/agent/data-access-api';
import { Backoff, CERT_NOT_PINNED, DOWNLOAD_BACKOFF, type JsonObject } from '@ccos/agent/util-host';
import type { InstallStep } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { failure, progressOf, type StepContext, type StepFailure, type StepHandler, type StepResult } from './step-handler';
import { formatBytes } from './steps/preflight-checks';

/** PROGRESS events during downloads come at most this often. */
export const PROGRESS_INTERVAL_MS = 1_000;

/**
 * The manifest, retried with backoff while the service is unreachable
 * (up to `limitMs`); a failure is returned as a step failure.
 */
export async function fetchManifest(ctx: StepContext, limitMs = 10 * 60_000): Promise<ArtifactManifest | StepFailure> {
  const backoff = new Backoff(DOWNLOAD_BACKOFF);
  const deadline = ctx.clock.monotonic() + limitMs;
  for (;;) {
    try {
      return await ctx.artifacts.manifest(ctx.signal);
    } catch (error) {
      if (isUnauthenticated(error) || ctx.signal.aborted) {
        throw error;
      }
      const said = (error as Error).message;
      if (error instanceof ApiError && error.code === MANIFEST_MISMATCH) {
        return failure('MANIFEST_MISMATCH', error.coded ? { ...error.coded, message: said } : said, message('agent.manifest.mismatch.hint'));
      }
      if (error instanceof ApiError && error.code === CERT_NOT_PINNED) {
        return failure('SERVICE_CERT_REFUSED', said, serviceCertHint(ctx));
      }
      if (!isTransient(error)) {
        return failure('MANIFEST_INVALID', message('agent.manifest.invalid', { error: said }), message('agent.manifest.invalid.hint'));
      }
      if (ctx.clock.monotonic() > deadline) {
        return failure('SERVICE_UNREACHABLE', message('agent.manifest.unreachable', { minutes: Math.round(limitMs / 60_000), error: said }), message('agent.service.reach.hint', { url: ctx.config.apiUrl }));
      }
      const delay = backoff.next();
      ctx.log.warn(`manifest: ${said}; retrying in ${(delay / 1000).toFixed(1)} s`);
      await ctx.clock.sleep(delay, ctx.signal);
    }
  }
}

/** What to do when whoever answered at the service's address is not the pinned service. */
export function serviceCertHint(ctx: StepContext): CodedText {
  return message('agent.service.cert.hint', { url: ctx.config.apiUrl });
}

/** The manifest's artifacts of one kind, in manifest order. */
export function artifactsOfKind(manifest: ArtifactManifest, kind: ArtifactKind): Artifact[] {
  return manifest.artifacts.filter((artifact) => artifact.kind === kind);
}

/**
 * A step that works on the manifest's artifacts of one kind (binaries, rpms, units): it needs no
 * config of its own, fetches the manifest (a failure to get it ends the step) and hands over those
 * artifacts.
 */
export abstract class ArtifactKindStep implements StepHandler {
  abstract readonly step: InstallStep;
  protected abstract readonly kind: ArtifactKind;

  validate(): CodedText[] {
    return [];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const manifest = await fetchManifest(ctx);
    if ('ok' in manifest) {
      return manifest;
    }
    return this.runOn(ctx, artifactsOfKind(manifest, this.kind), manifest);
  }

  protected abstract runOn(ctx: StepContext, artifacts: Artifact[], manifest: ArtifactManifest): Promise<StepResult>;
}

export interface BatchOptions {
  /** Where each artifact goes. */
  readonly destination: (artifact: Artifact) => string;
  readonly mode: number;
  /** The part of the step's 0..100 these downloads cover. */
  readonly progressRange: readonly [number, number];
  /** What an artifact is called in messages. */
  readonly noun: 'binary' | 'rpm' | 'unit';
  /** fsync each file (default true); see DownloadOptions.durable. */
  readonly durable?: boolean;
}

/** Per-file line of `detail.files`. */
function fileDetail(result: DownloadResult, artifact: Artifact): JsonObject {
  return {
    name: artifact.name,
    path: result.path,
    size: artifact.size,
    sha256: artifact.sha256,
    skipped: result.skipped,
    resumedFrom: result.resumedFrom,
    resumes: result.resumes,
    received: result.received,
  };
}

/**
 * Downloads a set of artifacts one after another with byte-based progress:
 * PROGRESS events at most every second with `detail.bytes/total`, a note
 * when the link breaks and the download resumes. Returns the per-file
 * details, or a failure naming the file.
 */
export async function downloadBatch(
  ctx: StepContext,
  artifacts: readonly Artifact[],
  options: BatchOptions,
): Promise<{ readonly files: JsonObject[]; readonly bytes: number; readonly received: number } | StepFailure> {
  const total = artifacts.reduce((sum, artifact) => sum + artifact.size, 0);
  const [from, to] = options.progressRange;
  let done = 0;
  let lastReport = -Infinity;
  const files: JsonObject[] = [];
  let received = 0;
  const report = async (force: boolean, current: Artifact, currentBytes: number, index: number, note: Message | null = null) => {
    const now = ctx.clock.monotonic();
    if (!force && now - lastReport < PROGRESS_INTERVAL_MS) {
      return;
    }
    lastReport = now;
    const bytes = done + currentBytes;
    const share = total === 0 ? 1 : bytes / total;
    await ctx.progress({
      ...progressOf(message(note === null ? 'agent.download.progress' : 'agent.download.progressResuming', { note, file: current.name, index: index + 1, count: artifacts.length, bytes: formatBytes(bytes), total: formatBytes(total) })),
      progress: Math.round(from + (to - from) * share),
      detail: { bytes, total, file: current.name, files: { done: index, total: artifacts.length } },
    });
  };
  for (const [index, artifact] of artifacts.entries()) {
    const dest = options.destination(artifact);
    let result: DownloadResult;
    try {
      const pending: Promise<void>[] = [];
      result = await ctx.artifacts.download(artifact, dest, {
        mode: options.mode,
        durable: options.durable,
        signal: ctx.signal,
        onProgress: ({ bytes }) => {
          pending.push(report(false, artifact, bytes, index));
        },
        onRetry: ({ delayMs, reason }) => {
          pending.push(report(true, artifact, 0, index, bare(message('agent.download.resuming', { reason, seconds: Math.round(delayMs / 1000) }))));
        },
      });
      await Promise.all(pending);
    } catch (error) {
      if (error instanceof DownloadError) {
        if (error.code === 'CANCELLED') {
          throw error;
        }
        const hints: Partial<Record<DownloadError['code'], CodedText>> = {
          SERVICE_CERT_REFUSED: serviceCertHint(ctx),
          CHECKSUM_MISMATCH: message('agent.download.checksum.hint'),
          DISK_WRITE_FAILED: message('agent.download.disk.hint', { path: dest }),
          NETWORK_UNREACHABLE: message('agent.download.network.hint', { url: ctx.config.apiUrl }),
        };
        const hint = hints[error.code] ?? message('agent.download.other.hint');
        const code = error.code === 'DISK_WRITE_FAILED' && /ENOSPC|EDQUOT/.test(String(error.detail['errno'])) ? 'DISK_FULL' : error.code;
        return failure(code, message('agent.download.failed', { noun: bare(message(`agent.noun.${options.noun}`)), file: artifact.name, error: error.coded }), hint, {
          detail: { file: artifact.name, path: dest, ...error.detail },
        });
      }
      if (error instanceof ApiError && !isUnauthenticated(error)) {
        return failure('DOWNLOAD_REFUSED', message('agent.download.failed', { noun: bare(message(`agent.noun.${options.noun}`)), file: artifact.name, error: error.coded ?? error.message }), message('agent.download.refused.hint'), {
          detail: { file: artifact.name },
        });
      }
      throw error;
    }
    received += result.received;
    done += artifact.size;
    files.push(fileDetail(result, artifact));
    ctx.log.info(`${options.noun} ${artifact.name}: ${result.skipped ? 'already present' : `downloaded (${result.received} bytes, resumed from ${result.resumedFrom}, ${result.attempts} attempt(s))`}`);
  }
  const skipped = files.filter((file) => file.skipped === true).length;
  await ctx.progress({
    ...progressOf(message('agent.download.done', { count: artifacts.length, size: formatBytes(total), skipped, received: formatBytes(received) })),
    progress: to,
    detail: { bytes: total, total, files: { done: artifacts.length, total: artifacts.length } },
  });
  return { files, bytes: total, received };
}
