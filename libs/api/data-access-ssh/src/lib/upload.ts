import { createHash, randomBytes } from 'node:crypto';
import { open as openLocal, type FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import type { SFTPWrapper } from 'ssh2';
import { verifyRemoteSha256, type ChecksumMethod } from './remote-checksum';
import { defineScript } from './remote-script';
import { readRawError, remoteFailed, SshError } from './ssh-errors';
import type { SshSession } from './ssh-session';

/** What to upload and where. */
export interface UploadOptions {
  /** A local file path, or the content itself. */
  readonly source: string | Buffer;
  /** Absolute path on the host; its folder is created when missing. */
  readonly remotePath: string;
  /** File mode (default 0o644), e.g. 0o755 for an executable. */
  readonly mode?: number;
  /** The SHA-256 the content must have (e.g. from the artifact manifest); checked on both ends. */
  readonly sha256?: string;
  /** Called after each chunk the server acknowledged. */
  readonly onProgress?: (progress: UploadProgress) => void;
  /** Install through `sudo -n` (default: the session's setting): staged in /tmp, then copied into place as root. */
  readonly sudo?: boolean;
  /** SFTP writes in flight (default 32). */
  readonly concurrency?: number;
  /** Bytes per SFTP write (default 64 KiB). */
  readonly chunkSize?: number;
}

/** Upload progress. */
export interface UploadProgress {
  readonly bytesSent: number;
  readonly totalBytes: number;
}

/** A finished, verified upload. */
export interface UploadResult {
  readonly remotePath: string;
  readonly bytes: number;
  /** SHA-256 of the content, equal on both ends. */
  readonly sha256: string;
  readonly verifiedBy: ChecksumMethod;
  readonly durationMs: number;
  readonly bytesPerSecond: number;
}

const MAKE_DIR = defineScript('make-dir', 'mkdir -p -- "$1"');
const STAGE = defineScript('stage-upload', 'cp -- "$1" "$2" && rm -f -- "$1"');
const PLACE = defineScript('place-upload', 'chmod "$3" "$1" && mv -f -- "$1" "$2"');
const REMOVE = defineScript('remove-upload', 'rm -f -- "$@"');

/**
 * Uploads a file over SFTP so that the target path only ever holds a
 * complete, verified copy: the bytes go to a temporary name in the same
 * folder, the temporary file's SHA-256 is computed on the host and compared
 * with the one computed here while reading the source, and only then is it
 * given its mode and renamed over the target (rename is atomic). A mismatch
 * removes the temporary file and throws `CHECKSUM_MISMATCH`.
 *
 * With sudo, SFTP (which runs as the SSH user) writes to /tmp, and root
 * copies the file next to the target before the check and the rename.
 */
export async function uploadFile(session: SshSession, options: UploadOptions): Promise<UploadResult> {
  const started = Date.now();
  const remotePath = checkRemotePath(options.remotePath);
  const mode = options.mode ?? 0o644;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) {
    throw new RangeError(`mode must be 0..0o7777, got ${mode}`);
  }
  const expected = options.sha256?.trim().toLowerCase();
  if (expected !== undefined && !/^[0-9a-f]{64}$/.test(expected)) {
    throw new RangeError('sha256 must be 64 hex digits');
  }
  const sudo = options.sudo ?? session.sudo;
  const folder = posix.dirname(remotePath);
  const suffix = randomBytes(6).toString('hex');
  const temporary = posix.join(folder, `.${posix.basename(remotePath)}.ccos-upload-${suffix}`);
  const staging = sudo ? `/tmp/.ccos-upload-${suffix}` : temporary;

  await runStep(session, 'Creating the folder', folder, MAKE_DIR, [folder], sudo);
  const source = await openSource(options.source);
  let sha256: string;
  try {
    const sftp = await session.sftp();
    sha256 = await writeRemote(session, sftp, staging, source, {
      concurrency: options.concurrency ?? 32,
      chunkSize: options.chunkSize ?? 64 * 1024,
      onProgress: options.onProgress,
    });
  } catch (error) {
    await removeQuietly(session, [staging], false);
    throw error;
  } finally {
    await source.close();
  }
  try {
    if (sudo) {
      await runStep(session, 'Moving the upload into place', remotePath, STAGE, [staging, temporary], true);
    }
    if (expected !== undefined && sha256 !== expected) {
      throw new SshError(
        `The local source for ${remotePath} has SHA-256 ${sha256}, expected ${expected}: the file on this server is corrupt or not the published one. Nothing was installed on ${session.endpoint}.`,
        { kind: 'CHECKSUM_MISMATCH', endpoint: session.endpoint, phase: 'ready', expectedSha256: expected, actualSha256: sha256 },
      );
    }
    const verified = await verifyRemoteSha256(session, temporary, sha256, { sudo });
    await runStep(session, 'Installing', remotePath, PLACE, [temporary, remotePath, mode.toString(8).padStart(4, '0')], sudo);
    const durationMs = Date.now() - started;
    return {
      remotePath,
      bytes: source.size,
      sha256,
      verifiedBy: verified.method,
      durationMs,
      bytesPerSecond: Math.round(source.size / Math.max(durationMs / 1000, 0.001)),
    };
  } catch (error) {
    await removeQuietly(session, sudo ? [staging, temporary] : [temporary], sudo);
    throw error;
  }
}

/** An upload source of known size, read in order, block by block. */
interface UploadSource {
  readonly size: number;
  /** The next block, or null at the end. */
  nextBlock(): Promise<Buffer | null>;
  close(): Promise<void>;
}

/**
 * Bytes read from a local file at once. SFTP chunks are cut from these
 * blocks: one thread-pool read per 64 KiB chunk halved the throughput.
 */
const READ_BLOCK_BYTES = 4 * 1024 * 1024;

async function openSource(source: string | Buffer): Promise<UploadSource> {
  if (Buffer.isBuffer(source)) {
    let done = false;
    return {
      size: source.length,
      nextBlock: async () => {
        const block = done || source.length === 0 ? null : source;
        done = true;
        return block;
      },
      close: async () => undefined,
    };
  }
  const handle: FileHandle = await openLocal(source, 'r');
  const { size } = await handle.stat();
  let position = 0;
  return {
    size,
    nextBlock: async () => {
      const want = Math.min(READ_BLOCK_BYTES, size - position);
      if (want <= 0) {
        return null;
      }
      const buffer = Buffer.allocUnsafe(want);
      const { bytesRead } = await handle.read(buffer, 0, want, position);
      if (bytesRead !== want) {
        throw new Error('the local file changed size while it was being uploaded');
      }
      position += bytesRead;
      return buffer;
    },
    close: () => handle.close(),
  };
}

/**
 * Pipelined SFTP writes: up to `concurrency` requests in flight, so the
 * transfer is not bound by one round trip per chunk, while the next block
 * is read from disk. Blocks are hashed in order, so the SHA-256 of what was
 * sent is known when the last write is acknowledged.
 */
async function writeRemote(
  session: SshSession,
  sftp: SFTPWrapper,
  path: string,
  source: UploadSource,
  settings: { concurrency: number; chunkSize: number; onProgress: UploadOptions['onProgress'] },
): Promise<string> {
  const fail = (what: string, error: unknown) => session.lostReason ?? remoteFailed(session.endpoint, what, `${readRawError(error).message}.`, error);
  const handle = await new Promise<Buffer>((resolve, reject) => {
    sftp.open(path, 'w', { mode: 0o600 }, (error, opened) => (error ? reject(fail(`Creating ${path}`, error)) : resolve(opened)));
  });
  const hash = createHash('sha256');
  let sent = 0;
  try {
    let next = source.nextBlock();
    for (let offset = 0; ;) {
      const block = await next;
      if (block === null) {
        break;
      }
      next = source.nextBlock();
      next.catch(() => undefined);
      hash.update(block);
      await writeBlock(sftp, handle, block, offset, settings, (bytes) => {
        sent += bytes;
        settings.onProgress?.({ bytesSent: sent, totalBytes: source.size });
      }).catch((error: unknown) => {
        throw fail(`Writing ${path}`, error);
      });
      offset += block.length;
    }
  } finally {
    await new Promise<void>((resolve) => sftp.close(handle, () => resolve()));
  }
  if (source.size === 0) {
    settings.onProgress?.({ bytesSent: 0, totalBytes: 0 });
  }
  return hash.digest('hex');
}

/** Writes one block as chunks, keeping `concurrency` writes in flight (callbacks, not promises: this is the hot loop). */
function writeBlock(
  sftp: SFTPWrapper,
  handle: Buffer,
  block: Buffer,
  offset: number,
  settings: { concurrency: number; chunkSize: number },
  written: (bytes: number) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let next = 0;
    let inFlight = 0;
    let failed = false;
    const pump = () => {
      while (!failed && inFlight < settings.concurrency && next < block.length) {
        const start = next;
        const length = Math.min(settings.chunkSize, block.length - start);
        next += length;
        inFlight += 1;
        sftp.write(handle, block, start, length, offset + start, (error) => {
          inFlight -= 1;
          if (failed) {
            return;
          }
          if (error) {
            failed = true;
            reject(error);
            return;
          }
          written(length);
          if (next >= block.length && inFlight === 0) {
            resolve();
          } else {
            pump();
          }
        });
      }
    };
    pump();
  });
}

async function runStep(session: SshSession, what: string, path: string, script: Parameters<SshSession['runScript']>[0], args: string[], sudo: boolean): Promise<void> {
  const result = await session.runScript(script, args, { sudo, timeoutMs: 120_000 });
  if (result.exitCode !== 0) {
    const reason = result.stderr.trim().slice(-300) || `exit ${result.exitCode ?? result.signal ?? 'unknown'}`;
    const hint = /a password is required|not in the sudoers/i.test(reason)
      ? ' The SSH user needs passwordless sudo (NOPASSWD) for installs.'
      : /No space left/i.test(reason) ? ' Free disk space on the host.' : '';
    throw remoteFailed(session.endpoint, `${what} ${path}`, `${reason}.${hint}`);
  }
}

async function removeQuietly(session: SshSession, paths: string[], sudo: boolean): Promise<void> {
  if (!session.closed) {
    await session.runScript(REMOVE, paths, { sudo, timeoutMs: 30_000 }).catch(() => undefined);
  }
}

function checkRemotePath(path: string): string {
  if (!path.startsWith('/') || path.endsWith('/') || /[\0\n]/.test(path) || path.split('/').some((part) => part === '..')) {
    throw new RangeError('remotePath must be an absolute file path without "..", newlines or a trailing "/"');
  }
  return posix.normalize(path);
}
