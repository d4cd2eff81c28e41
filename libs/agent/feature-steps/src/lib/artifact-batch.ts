import { bare, type Message, message } from '@ccos/shared/messages';
import {
  ApiError, DownloadError, MANIFEST_MISMATCH, isTransient, isUnauthenticated,
  type Artifact, type ArtifactKind, type ArtifactManifest, type DownloadResult,
} from '@ccos/agent/data-access-api';
import { Backoff, CERT_NOT_PINNED, DOWNLOAD_BACKOFF, type JsonObject } from '@ccos/agent/util-host';
import { formatBytes } from './steps/preflight-checks';
import { failure, progressOf, type StepContext, type StepFailure } from './step-handler';

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
      const message = (error as Error).message;
      if (error instanceof ApiError && error.code === MANIFEST_MISMATCH) {
        return failure(
          'MANIFEST_MISMATCH',
          message,
          'Something between this host and the installer service altered the manifest, or the service\'s artifact folder changed since the run started. Check the path (proxies) and the artifact folder, then retry: a new run pins the manifest as it is then.',
        );
      }
      if (error instanceof ApiError && error.code === CERT_NOT_PINNED) {
        return failure('SERVICE_CERT_REFUSED', message, serviceCertHint(ctx));
      }
      if (!isTransient(error)) {
        return failure('MANIFEST_INVALID', `the artifact manifest cannot be used: ${message}`, 'Check the installer service\'s artifact folder and its logs; the manifest must list kind, name, size and sha256 of every artifact.');
      }
      if (ctx.clock.monotonic() > deadline) {
        return failure('SERVICE_UNREACHABLE', `the artifact manifest could not be fetched for ${Math.round(limitMs / 60_000)} min: ${message}`, `Check that this host reaches the installer service at ${ctx.config.apiUrl}.`);
      }
      const delay = backoff.next();
      ctx.log.warn(`manifest: ${message}; retrying in ${(delay / 1000).toFixed(1)} s`);
      await ctx.clock.sleep(delay, ctx.signal);
    }
  }
}

/** What to do when whoever answered at the service's address is not the pinned service. */
export function serviceCertHint(ctx: StepContext): string {
  return `Something between this host and ${ctx.config.apiUrl} answers with another certificate (a man in the middle, or a TLS-inspecting proxy), or the service's certificate changed since the run started. Nothing was sent to it. Let this host reach the service directly, then retry.`;
}

/** The manifest's artifacts of one kind, in manifest order. */
export function artifactsOfKind(manifest: ArtifactManifest, kind: ArtifactKind): Artifact[] {
  return manifest.artifacts.filter((artifact) => artifact.kind === kind);
}

export interface BatchOptions {
  /** Where each artifact goes. */
  readonly destination: (artifact: Artifact) => string;
  readonly mode: number;
  /** The part of the step's 0..100 these downloads cover. */
  readonly progressRange: readonly [number, number];
  /** e.g. "binary", "rpm". */
  readonly noun: string;
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
        const hints: Partial<Record<DownloadError['code'], string>> = {
          SERVICE_CERT_REFUSED: serviceCertHint(ctx),
          CHECKSUM_MISMATCH: 'The artifact changed on the installer service during the download, or something on the path alters it (proxy): check the service\'s artifact folder, then retry.',
          DISK_WRITE_FAILED: `Free disk space / check permissions where ${dest} is written, then retry.`,
          NETWORK_UNREACHABLE: `Check the link between this host and ${ctx.config.apiUrl}; the download resumes where it stopped on retry.`,
        };
        const hint = hints[error.code] ?? 'Check the installer service\'s artifact folder and logs.';
        const code = error.code === 'DISK_WRITE_FAILED' && /ENOSPC|EDQUOT/.test(String(error.detail['errno'])) ? 'DISK_FULL' : error.code;
        return failure(code, `${options.noun} ${artifact.name}: ${error.message}`, hint, { detail: { file: artifact.name, path: dest, ...error.detail } });
      }
      if (error instanceof ApiError && !isUnauthenticated(error)) {
        return failure('DOWNLOAD_REFUSED', `${options.noun} ${artifact.name}: ${error.message}`, 'Check the installer service\'s logs.', { detail: { file: artifact.name } });
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
