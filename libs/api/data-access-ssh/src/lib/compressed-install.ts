import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import type { RemoteCheck } from './remote-batch';
import { defineScript } from './remote-script';
import { checksumMismatch, remoteFailed } from './ssh-errors';
import type { SshSession } from './ssh-session';

/** Decompressors this code can stream to; `zstd` decompresses ~8× faster than gzip on the host. */
export type StreamCodec = 'zstd';

/** What to install: compressed bytes, and the SHA-256 and size the decompressed file must have. */
export interface CompressedInstallOptions {
  /** The compressed content, sent as the command's stdin: in memory, or a file read as it is sent. */
  readonly compressed: Buffer | CompressedFile;
  readonly codec: StreamCodec;
  /** SHA-256 (hex) of the decompressed content; the host checks it before the file takes its place. */
  readonly sha256: string;
  /** Size of the decompressed content. */
  readonly size: number;
  /** Absolute path on the host; its folder is created when missing. */
  readonly remotePath: string;
  /** File mode (default 0o644). */
  readonly mode?: number;
  /** Through `sudo -n` (default: the session's setting): the whole script runs as root. */
  readonly sudo?: boolean;
}

/** A compressed file on this machine and its size. */
export interface CompressedFile {
  readonly path: string;
  readonly bytes: number;
}

/** A finished, verified compressed install. */
export interface CompressedInstallResult {
  readonly remotePath: string;
  /** Bytes sent over the channel (the compressed size). */
  readonly bytesSent: number;
  readonly bytes: number;
  readonly sha256: string;
  readonly durationMs: number;
}

/** Whether the host can take a compressed stream: the decompressor and a local SHA-256 tool. */
const PROBE = defineScript('stream-probe', 'command -v "$1" >/dev/null 2>&1 && { command -v openssl || command -v sha256sum; } >/dev/null 2>&1 && echo yes || echo no');

/**
 * Decompresses stdin into a temporary file beside the target, hashes the result on the host
 * and compares it with `$2` (which came in this command, over the authenticated channel);
 * only a match is given its mode and renamed over the target. Anything else removes the
 * temporary file and says why on stdout (`size N`, `sha256 X`, `decompress ...`).
 */
const INSTALL = defineScript('stream-install', [
  'dest=$1 want=$2 size=$3 mode=$4 codec=$5',
  'dir=${dest%/*}',
  'tmp="$dir/.${dest##*/}.ccos-stream-$$"',
  'mkdir -p -- "$dir" || { echo "mkdir failed"; exit 10; }',
  'trap \'rm -f -- "$tmp"\' EXIT',
  'case $codec in',
  '  zstd) zstd -dcq > "$tmp" 2>/dev/null ;;',
  '  *) echo "codec $codec"; exit 11 ;;',
  'esac || { echo "decompress $codec exit $?"; exit 12; }',
  'got=$(wc -c < "$tmp") || exit 13',
  'got=$((got + 0))',
  '[ "$got" = "$size" ] || { echo "size $got"; exit 14; }',
  // OpenSSL's SHA-256 uses the CPU's SHA instructions (coreutils' does not): a seventh of the CPU.
  '{ command -v openssl >/dev/null 2>&1 && sum=$(openssl dgst -sha256 -r < "$tmp" 2>/dev/null); } || sum=$(sha256sum < "$tmp") || exit 13',
  'sum=${sum%% *}',
  '[ "$sum" = "$want" ] || { echo "sha256 $sum"; exit 15; }',
  'chmod "$mode" "$tmp" && mv -f -- "$tmp" "$dest" || { echo "install failed"; exit 16; }',
  'trap - EXIT',
  'echo installed',
].join('\n'));

/** True when the host has the codec's decompressor and `openssl` or `sha256sum` (one short command). */
export async function canStreamCompressed(session: SshSession, codec: StreamCodec, options: { readonly sudo?: boolean } = {}): Promise<boolean> {
  const check = streamProbeCheck(codec);
  return check.read(await session.runScript(check.script, check.args, { sudo: options.sudo ?? session.sudo, timeoutMs: 15_000 }), session.endpoint);
}

/** {@link canStreamCompressed} as a check for `runChecks`. */
export function streamProbeCheck(codec: StreamCodec): RemoteCheck<boolean> {
  return { script: PROBE, args: [codec], read: (result) => result.exitCode === 0 && result.stdout.trim() === 'yes' };
}

/**
 * Installs a file by streaming its compressed bytes through one exec channel (no SFTP): the
 * host decompresses, checks the size and SHA-256 of what it got against the values sent in
 * the same authenticated command, and only then puts the file in place atomically. The
 * expected hash is the service's hash of the uncompressed file, never one derived from the
 * compressed bytes, so a wrong or tampered compressed copy can only fail, never install.
 * A mismatch throws `CHECKSUM_MISMATCH` with both values; the target is left as it was.
 */
export async function installCompressed(session: SshSession, options: CompressedInstallOptions): Promise<CompressedInstallResult> {
  const started = Date.now();
  const remotePath = options.remotePath;
  if (!remotePath.startsWith('/') || remotePath.endsWith('/') || /[\0\n]/.test(remotePath) || remotePath.split('/').some((part) => part === '..')) {
    throw new RangeError('remotePath must be an absolute file path without "..", newlines or a trailing "/"');
  }
  const mode = options.mode ?? 0o644;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) {
    throw new RangeError(`mode must be 0..0o7777, got ${mode}`);
  }
  const sha256 = options.sha256.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) {
    throw new RangeError('sha256 must be 64 hex digits');
  }
  if (!Number.isSafeInteger(options.size) || options.size < 0) {
    throw new RangeError('size must be a non-negative integer');
  }
  const target = posix.normalize(remotePath);
  const result = await session.runScript(INSTALL, [target, sha256, String(options.size), mode.toString(8).padStart(4, '0'), options.codec], {
    sudo: options.sudo ?? session.sudo,
    stdin: Buffer.isBuffer(options.compressed) ? options.compressed : () => createReadStream((options.compressed as CompressedFile).path),
    timeoutMs: 600_000,
  });
  const said = result.stdout.trim().split('\n').at(-1) ?? '';
  if (result.exitCode === 0 && said === 'installed') {
    return { remotePath: target, bytesSent: Buffer.isBuffer(options.compressed) ? options.compressed.length : options.compressed.bytes, bytes: options.size, sha256, durationMs: Date.now() - started };
  }
  const mismatch = /^sha256 ([0-9a-f]{64})$/.exec(said);
  if (mismatch) {
    throw checksumMismatch(session.endpoint, target, sha256, mismatch[1] ?? '');
  }
  const size = /^size (\d+)$/.exec(said);
  const reason = size
    ? `the decompressed copy has ${size[1]} bytes, expected ${options.size}; nothing was installed`
    : `${said || `exit ${result.exitCode ?? result.signal ?? 'unknown'}`}${result.timedOut ? ' (timed out)' : ''}${/a password is required|not in the sudoers/i.test(result.stderr) ? '. The SSH user needs passwordless sudo (NOPASSWD) for installs' : ''}; nothing was installed`;
  throw remoteFailed(session.endpoint, `Installing ${target} from a ${options.codec} stream`, `${reason}.`);
}
