import { type Hash, createHash } from 'node:crypto';
import {
  Backoff, CERT_NOT_PINNED, DOWNLOAD_BACKOFF, HttpError, readBody,
  type BackoffPolicy, type Clock, type FileSystem, type Http, type Logger, type TlsPin,
} from '@ccos/agent/util-host';
import { parseManifest, type Artifact, type ArtifactManifest } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { ApiError, httpFailureKind } from './api-errors';

/** The sha256 of a part file's bytes so far, as this agent wrote them; no hash when it did not write all of them. */
interface PartDigest {
  hash: Hash | null;
  bytes: number;
}

/** Progress of one download, in bytes of the final file. */
export interface DownloadProgress {
  readonly bytes: number;
  readonly total: number;
}

export interface DownloadOptions {
  readonly onProgress?: (progress: DownloadProgress) => void;
  /** Told about each retry (for a PROGRESS message such as "link down, retrying in 4 s"). */
  readonly onRetry?: (info: { readonly attempt: number; readonly delayMs: number; readonly reason: string }) => void;
  readonly signal?: AbortSignal;
  /** Permission bits of the final file. */
  readonly mode?: number;
  /**
   * fsync the file before it takes its name (default true). False for files used at once and
   * deleted (the rpms of one transaction): every later use re-checks the sha256 anyway, so a
   * crash can only cost a download, and 73 fsyncs per host queued on one disk were a large
   * part of INSTALL_PACKAGES when 20 hosts installed at once.
   */
  readonly durable?: boolean;
}

export interface DownloadResult {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  /** Nothing fetched: the file was already there with the right checksum. */
  readonly skipped: boolean;
  /**
   * The byte offset the download last resumed from with a Range request
   * (after a broken connection, or a `.part` left by an earlier run); 0 when
   * every byte came in one response.
   */
  readonly resumedFrom: number;
  /** How many times it resumed. */
  readonly resumes: number;
  /** Bytes received over the network. */
  readonly received: number;
  readonly attempts: number;
}

/** Why a download gave up; `code` is one of the agent's known failure codes. */
export class DownloadError extends Error {
  /** The message by its code in the catalogue, so the operator reads it in their language. */
  readonly coded: Message;

  constructor(
    readonly code: 'CHECKSUM_MISMATCH' | 'ARTIFACT_NOT_FOUND' | 'DOWNLOAD_REFUSED' | 'NETWORK_UNREACHABLE' | 'DISK_WRITE_FAILED' | 'SERVICE_CERT_REFUSED' | 'CANCELLED',
    text: CodedText,
    readonly detail: Readonly<Record<string, string | number>> = {},
    options?: { cause?: unknown },
  ) {
    super(text.message, options);
    this.name = 'DownloadError';
    this.coded = bare(text);
  }
}

/** `ApiError.code` when the manifest's bytes are not the ones pinned over SSH. */
export const MANIFEST_MISMATCH = 'MANIFEST_MISMATCH';

export interface ArtifactClientOptions {
  readonly apiUrl: string;
  readonly token: string;
  /** How to recognise the service on https (see AgentConfig.serviceTls); null on http. */
  readonly serviceTls: TlsPin | null;
  /**
   * sha256 (hex) the manifest's bytes must have: it came over SSH, so a manifest
   * altered on the way (with checksums to match altered files) is refused.
   */
  readonly manifestSha256: string;
  readonly http: Http;
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: BackoffPolicy;
  /** Give up after this long without receiving a byte (default 10 min). */
  readonly stallLimitMs?: number;
  readonly random?: () => number;
}

const DISK_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO']);

/**
 * Artifacts from the installer service: the manifest, and resumable,
 * verified downloads. A download writes `<dest>.part`, continues it with
 * `Range`/`If-Range` after a broken connection (or in a later run), checks
 * the sha256 and only then renames it into place, so `<dest>` is either
 * absent, the old file, or the verified new one.
 */
export class ArtifactClient {
  constructor(private readonly options: ArtifactClientOptions) {}

  /**
   * The manifest, only if its bytes are the pinned ones: the checksums in it are what
   * every download is verified against, so they must not come from the network alone.
   */
  async manifest(signal?: AbortSignal): Promise<ArtifactManifest> {
    const response = await this.get('/artifacts/manifest', {}, signal).catch((error: unknown) => {
      if (error instanceof HttpError) {
        // Another certificate is not a glitch to wait out: whoever answers is not the service.
        const kind = error.code === CERT_NOT_PINNED ? 'rejected' : 'transient';
        throw new ApiError(kind, error.code, `GET /artifacts/manifest: ${error.message}`, { cause: error });
      }
      throw error;
    });
    const body = await readBody(response, 8 * 1024 * 1024).catch((error: unknown) => {
      throw new ApiError('transient', error instanceof HttpError ? error.code : 'EREAD', `reading the manifest failed: ${(error as Error).message}`);
    });
    if (response.status !== 200) {
      throw new ApiError(httpFailureKind(response.status), `HTTP_${response.status}`, `GET /artifacts/manifest answered HTTP ${response.status}`);
    }
    const actual = createHash('sha256').update(body).digest('hex');
    if (actual !== this.options.manifestSha256) {
      throw new ApiError(
        'rejected',
        MANIFEST_MISMATCH,
        message('agent.manifest.mismatch', { actual, pinned: this.options.manifestSha256 }).message,
        { coded: bare(message('agent.manifest.mismatch', { actual, pinned: this.options.manifestSha256 })) },
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new ApiError('rejected', 'BAD_RESPONSE', 'the artifact manifest is not JSON');
    }
    try {
      return parseManifest(parsed);
    } catch (error) {
      throw new ApiError('rejected', 'BAD_MANIFEST', (error as Error).message);
    }
  }

  /** Whether `path` already holds the artifact (size and sha256). */
  async isPresent(artifact: Artifact, path: string): Promise<boolean> {
    const info = await this.options.fs.stat(path);
    if (info?.type !== 'file' || info.size !== artifact.size) {
      return false;
    }
    return (await this.options.fs.sha256(path)) === artifact.sha256;
  }

  /**
   * Downloads an artifact to `dest`. Network failures are retried with
   * capped backoff, resuming where the bytes stopped, until nothing has
   * arrived for the stall limit; a checksum mismatch discards the file and
   * downloads it once more from scratch before failing.
   */
  async download(artifact: Artifact, dest: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    const { fs, clock, log } = this.options;
    const mode = options.mode ?? 0o644;
    if (await this.isPresent(artifact, dest)) {
      const info = await fs.stat(dest);
      if (info !== null && info.mode !== mode) {
        await fs.chmod(dest, mode);
      }
      options.onProgress?.({ bytes: artifact.size, total: artifact.size });
      return { path: dest, sha256: artifact.sha256, size: artifact.size, skipped: true, resumedFrom: 0, resumes: 0, received: 0, attempts: 0 };
    }
    const part = `${dest}.part`;
    const backoff = new Backoff(this.options.backoff ?? DOWNLOAD_BACKOFF, this.options.random);
    const stallLimit = this.options.stallLimitMs ?? 10 * 60_000;
    let lastProgressAt = clock.monotonic();
    let received = 0;
    let attempts = 0;
    let mismatches = 0;
    const partInfo = await fs.stat(part);
    if (partInfo !== null && (partInfo.type !== 'file' || partInfo.size > artifact.size)) {
      await fs.remove(part);
    }
    let resumedFrom = 0;
    let resumes = 0;
    // The sha256 of the part's bytes as they are written, so a finished download is not read back to be hashed.
    const digest: PartDigest = { hash: null, bytes: 0 };
    const onResume = (offset: number) => {
      resumedFrom = offset;
      resumes += 1;
    };
    for (;;) {
      if (options.signal?.aborted) {
        throw new DownloadError('CANCELLED', message('agent.download.cancelled', { file: artifact.name }));
      }
      attempts += 1;
      let failure: { reason: string; code: string } | null = null;
      try {
        const before = received;
        received += await this.fetchInto(artifact, part, options, onResume, digest);
        if (received > before) {
          lastProgressAt = clock.monotonic();
        }
      } catch (error) {
        if (error instanceof DownloadError || error instanceof ApiError) {
          throw error;
        }
        if (error instanceof HttpError && error.code === CERT_NOT_PINNED) {
          throw new DownloadError('SERVICE_CERT_REFUSED', message('agent.download.certRefused', { file: artifact.name, error: error.message }), { file: artifact.name }, { cause: error });
        }
        const err = error as NodeJS.ErrnoException & { received?: number };
        if (err.received !== undefined && err.received > 0) {
          received += err.received;
          lastProgressAt = clock.monotonic();
          backoff.reset();
        }
        if (err.code !== undefined && DISK_CODES.has(err.code) && !(error instanceof HttpError)) {
          throw new DownloadError('DISK_WRITE_FAILED', message('agent.download.writeFailed', { path: part, error: err.message }), { file: part, errno: err.code }, { cause: error });
        }
        failure = { reason: err.message, code: err.code ?? 'EREQUEST' };
      }
      if (failure === null) {
        const actual = digest.hash !== null && digest.bytes === artifact.size ? digest.hash.digest('hex') : await fs.sha256(part);
        digest.hash = null;
        if (actual === artifact.sha256) {
          await fs.chmod(part, mode);
          await fs.rename(part, dest);
          return { path: dest, sha256: actual, size: artifact.size, skipped: false, resumedFrom, resumes, received, attempts };
        }
        mismatches += 1;
        await fs.remove(part);
        log.warn(`sha256 of ${artifact.name} is ${actual}, expected ${artifact.sha256} (mismatch ${mismatches})`);
        if (mismatches >= 2) {
          throw new DownloadError(
            'CHECKSUM_MISMATCH',
            message('agent.download.checksum', { file: artifact.name, actual, expected: artifact.sha256 }),
            { file: artifact.name, path: dest, expected: artifact.sha256, actual },
          );
        }
        continue;
      }
      if (clock.monotonic() - lastProgressAt > stallLimit) {
        throw new DownloadError(
          'NETWORK_UNREACHABLE',
          message('agent.download.stalled', { file: artifact.name, seconds: Math.round(stallLimit / 1000), error: failure.reason }),
          { file: artifact.name, errno: failure.code },
        );
      }
      const delayMs = backoff.next();
      log.info(`download of ${artifact.name} interrupted (${failure.reason}); retrying in ${(delayMs / 1000).toFixed(1)} s`);
      options.onRetry?.({ attempt: attempts, delayMs, reason: failure.reason });
      await clock.sleep(delayMs, options.signal);
    }
  }

  /**
   * One request: continues `part` from its current size. Returns the bytes
   * received; a broken connection throws with `received` set.
   */
  private async fetchInto(artifact: Artifact, part: string, options: DownloadOptions, onResume: (offset: number) => void, digest: PartDigest): Promise<number> {
    const { fs } = this.options;
    const info = await fs.stat(part);
    let offset = info?.type === 'file' ? info.size : 0;
    if (offset > artifact.size) {
      await fs.remove(part);
      offset = 0;
    }
    if (offset === artifact.size && artifact.size > 0) {
      return 0;
    }
    const headers: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-`, 'if-range': `"${artifact.sha256}"` } : {};
    const response = await this.get(`/artifacts/${artifact.kind}/${encodeURIComponent(artifact.name)}`, headers, options.signal);
    if (response.status === 416) {
      response.discard();
      // The server has no bytes past ours: the part is complete or foreign; start over.
      await fs.remove(part);
      throw Object.assign(new Error(`range ${offset}- not satisfiable; starting ${artifact.name} over`), { code: 'ERANGE' });
    }
    if (response.status === 404) {
      response.discard();
      throw new DownloadError('ARTIFACT_NOT_FOUND', message('agent.download.notFound', { kind: artifact.kind, file: artifact.name }), { file: artifact.name });
    }
    if (response.status !== 200 && response.status !== 206) {
      response.discard();
      const kind = httpFailureKind(response.status);
      if (kind === 'unauthenticated') {
        throw new ApiError('unauthenticated', 'HTTP_401', `GET ${artifact.kind}/${artifact.name} answered 401: the run's token is no longer valid`);
      }
      if (kind === 'rejected') {
        throw new DownloadError('DOWNLOAD_REFUSED', message('agent.download.refused', { kind: artifact.kind, file: artifact.name, status: response.status }), { file: artifact.name, status: response.status });
      }
      throw Object.assign(new Error(`HTTP ${response.status}`), { code: `HTTP_${response.status}` });
    }
    let start = 0;
    if (response.status === 206) {
      start = Number(/^bytes (\d+)-/.exec(response.headers['content-range'] ?? '')?.[1] ?? Number.NaN);
      if (start !== offset) {
        response.discard();
        await fs.remove(part);
        throw Object.assign(new Error(`server resumed at ${response.headers['content-range'] ?? '?'} instead of byte ${offset}`), { code: 'ERANGE' });
      }
    }
    if (start > 0) {
      onResume(start);
    }
    // 200 to a range request: the file changed (If-Range) or ranges are unsupported; start over.
    const sink = await fs.openAppend(part, { truncate: start === 0 });
    if (start === 0) {
      digest.hash = createHash('sha256');
      digest.bytes = 0;
    } else if (digest.bytes !== start) {
      // A part left by an earlier agent: its bytes were never hashed here, so it is read back at the end.
      digest.hash = null;
    }
    let received = 0;
    try {
      for await (const chunk of response.body) {
        await sink.write(chunk);
        digest.hash?.update(chunk);
        digest.bytes += chunk.length;
        received += chunk.length;
        options.onProgress?.({ bytes: start + received, total: artifact.size });
        if (start + received > artifact.size) {
          response.discard();
          break;
        }
      }
      if (options.durable !== false) {
        await sink.sync();
      }
    } catch (error) {
      throw Object.assign(error as Error, { received });
    } finally {
      await sink.close();
    }
    return received;
  }

  private get(path: string, headers: Record<string, string>, signal?: AbortSignal) {
    return this.options.http.request({
      method: 'GET',
      url: `${this.options.apiUrl}${path}`,
      headers: { authorization: `Bearer ${this.options.token}`, ...headers },
      ...(this.options.serviceTls === null ? {} : { pin: this.options.serviceTls }),
      timeoutMs: 30_000,
      idleTimeoutMs: 15_000,
      signal,
    });
  }
}
