import { createHash } from 'node:crypto';
import type { RemoteCheck } from './remote-batch';
import type { ExecResult } from './remote-exec';
import { defineScript } from './remote-script';
import { checksumMismatch, readRawError, remoteFailed } from './ssh-errors';
import type { SshSession } from './ssh-session';

/** How a remote SHA-256 was computed. */
export type ChecksumMethod = 'sha256sum' | 'shasum' | 'openssl' | 'read-back';

/** A remote file's SHA-256 (lower-case hex). */
export interface RemoteChecksum {
  readonly sha256: string;
  readonly method: ChecksumMethod;
}

/**
 * Hashes on the host with whichever tool it has, OpenSSL first: it uses the CPU's SHA
 * instructions where coreutils' sha256sum does not, a seventh of the CPU for the agent's
 * 87 MB; an openssl that fails (a broken install) falls through to the others. The file is
 * read through a redirect, so its name never appears in the tool's output (sha256sum
 * escapes odd names).
 */
const SHA256 = defineScript('sha256', [
  'f=$1',
  '[ -f "$f" ] || { echo missing; exit 2; }',
  '[ -r "$f" ] || { echo unreadable; exit 2; }',
  'if command -v openssl >/dev/null 2>&1 && out=$(openssl dgst -sha256 -r < "$f" 2>/dev/null); then echo "openssl $out"',
  'elif command -v sha256sum >/dev/null 2>&1; then out=$(sha256sum < "$f") || exit 3; echo "sha256sum $out"',
  'elif command -v shasum >/dev/null 2>&1; then out=$(shasum -a 256 < "$f") || exit 3; echo "shasum $out"',
  'else echo no-tool; exit 4; fi',
].join('\n'));

/**
 * SHA-256 of a remote file, computed on the host (`openssl`, else `sha256sum`,
 * else `shasum`). A host with none of them gets the file read back over
 * SFTP and hashed here — slower, but still a real check; with `sudo` that
 * fallback is not possible and the error says to install coreutils.
 */
export async function remoteSha256(session: SshSession, path: string, options: { readonly sudo?: boolean } = {}): Promise<RemoteChecksum> {
  const sudo = options.sudo ?? session.sudo;
  const check = remoteSha256Check(path);
  const checksum = check.read(await session.runScript(check.script, check.args, { sudo, timeoutMs: 300_000 }), session.endpoint);
  if (checksum !== null) {
    return checksum;
  }
  if (sudo) {
    throw remoteFailed(session.endpoint, `Checking ${path}`,
      'the host has no sha256sum, shasum or openssl, and the file cannot be read back without sudo. Install coreutils on the host.');
  }
  return { sha256: await readBackSha256(session, path), method: 'read-back' };
}

/**
 * {@link remoteSha256} on the host as a check for `runChecks`; null when the host has no tool
 * to hash with (then only {@link remoteSha256} can tell, by reading the file back).
 */
export function remoteSha256Check(path: string): RemoteCheck<RemoteChecksum | null> {
  return {
    script: SHA256,
    args: [path],
    read(result: ExecResult, endpoint: string): RemoteChecksum | null {
      const line = result.stdout.trim();
      const match = /^(sha256sum|shasum|openssl) ([0-9a-f]{64})\b/.exec(line);
      if (result.exitCode === 0 && match !== null) {
        return { sha256: match[2] ?? '', method: match[1] as ChecksumMethod };
      }
      if (line === 'missing' || line === 'unreadable') {
        throw remoteFailed(endpoint, `Checking ${path}`, `the file is ${line === 'missing' ? 'not there' : 'not readable by the SSH user (use sudo)'}.`);
      }
      if (line === 'no-tool') {
        return null;
      }
      throw remoteFailed(endpoint, `Hashing ${path}`,
        `exit ${result.exitCode ?? result.signal ?? 'unknown'}${result.timedOut ? ' (timed out)' : ''}: ${result.stderr.trim().slice(-300) || 'no output'}`);
    },
  };
}

/**
 * Checks that a remote file has the expected SHA-256; throws
 * `CHECKSUM_MISMATCH` (with both values) when it does not.
 */
export async function verifyRemoteSha256(
  session: SshSession,
  path: string,
  expectedSha256: string,
  options: { readonly sudo?: boolean } = {},
): Promise<RemoteChecksum> {
  const expected = expectedSha256.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(expected)) {
    throw new RangeError('expected SHA-256 must be 64 hex digits');
  }
  const actual = await remoteSha256(session, path, options);
  if (actual.sha256 !== expected) {
    throw checksumMismatch(session.endpoint, path, expected, actual.sha256);
  }
  return actual;
}

async function readBackSha256(session: SshSession, path: string): Promise<string> {
  const sftp = await session.sftp();
  const hash = createHash('sha256');
  await new Promise<void>((resolve, reject) => {
    const stream = sftp.createReadStream(path);
    stream.on('data', (chunk: Buffer) => hash.update(chunk));
    stream.on('error', (error: unknown) => reject(remoteFailed(session.endpoint, `Reading back ${path}`, readRawError(error).message, error)));
    stream.on('end', () => resolve());
  });
  return hash.digest('hex');
}

/**
 * One line per file, in order: its SHA-256, `missing`, or `unreadable`; `no-tool` alone when the
 * host has neither openssl nor sha256sum. Each file is read through a redirect, as in SHA256.
 */
const SHA256_EACH = defineScript('sha256-each', [
  'if command -v openssl >/dev/null 2>&1; then tool=openssl; elif command -v sha256sum >/dev/null 2>&1; then tool=sha256sum; else echo no-tool; exit 4; fi',
  'for f in "$@"; do',
  '  if [ ! -e "$f" ]; then echo missing',
  '  elif [ ! -f "$f" ] || [ ! -r "$f" ]; then echo unreadable',
  '  elif [ "$tool" = openssl ] && out=$(openssl dgst -sha256 -r < "$f" 2>/dev/null); then echo "${out%% *}"',
  '  elif out=$(sha256sum < "$f" 2>/dev/null); then echo "${out%% *}"',
  '  else echo unreadable; fi',
  'done',
].join('\n'));

/**
 * SHA-256 of many remote files in one exec: path → hash, or null for a file that is not there.
 * Throws (naming the file) when one is there but cannot be read, and when the host has no tool
 * to hash with.
 */
export async function remoteSha256s(session: SshSession, paths: readonly string[], options: { readonly sudo?: boolean; readonly timeoutMs?: number } = {}): Promise<Map<string, string | null>> {
  if (paths.length === 0) {
    return new Map();
  }
  const check = sha256EachCheck(paths);
  return check.read(await session.runScript(check.script, check.args, { sudo: options.sudo ?? session.sudo, timeoutMs: options.timeoutMs ?? 120_000, tailBytes: paths.length * 80 + 4096 }), session.endpoint);
}

/** {@link remoteSha256s} as a check for `runChecks`, to share one exec with others. */
export function sha256EachCheck(paths: readonly string[]): RemoteCheck<Map<string, string | null>> {
  return {
    script: SHA256_EACH,
    args: paths,
    read(result: ExecResult, endpoint: string): Map<string, string | null> {
      const found = new Map<string, string | null>();
      if (paths.length === 0) {
        return found;
      }
      const lines = result.stdout.split('\n').filter((line) => line !== '');
      if (lines[0] === 'no-tool') {
        throw remoteFailed(endpoint, 'Hashing the recorded files', 'the host has neither openssl nor sha256sum. Install coreutils on the host.');
      }
      if (result.exitCode !== 0 || lines.length !== paths.length) {
        throw remoteFailed(endpoint, 'Hashing the recorded files',
          `exit ${result.exitCode ?? result.signal ?? 'unknown'}${result.timedOut ? ' (timed out)' : ''}, ${lines.length} of ${paths.length} answers: ${result.stderr.trim().slice(-300) || 'no output'}`);
      }
      paths.forEach((path, index) => {
        const line = lines[index] ?? '';
        if (line === 'unreadable') {
          throw remoteFailed(endpoint, `Checking ${path}`, 'the file is not readable by the SSH user (use sudo).');
        }
        found.set(path, line === 'missing' ? null : line);
      });
      for (const hash of found.values()) {
        if (hash !== null && !/^[0-9a-f]{64}$/.test(hash)) {
          throw remoteFailed(endpoint, 'Hashing the recorded files', `an answer is not a SHA-256: ${hash.slice(0, 80)}`);
        }
      }
      return found;
    },
  };
}
