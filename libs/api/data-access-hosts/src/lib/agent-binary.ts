import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamCodec } from '@ccos/api/data-access-ssh';

/** Where the agent lives on every host. */
export const AGENT_DIR = '/opt/ccos-scaler';
export const AGENT_REMOTE_PATH = `${AGENT_DIR}/boot-worker`;

/** The agent in a compressed form, a file streamed to hosts that can decompress it (never held in memory). */
export interface CompressedAgent {
  readonly codec: StreamCodec;
  readonly path: string;
  readonly bytes: number;
}

/** Copies of the agent to hosts since start, by how they went, and the bytes each way sent. */
export interface AgentCopyStats {
  streamed: number;
  streamedBytes: number;
  sftp: number;
  sftpBytes: number;
}

/** The agent executable the service copies to hosts, with its checksum. */
export interface AgentBinary {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
  /**
   * The zstd form, when this machine has `zstd`: resolves once it is ready (null = copy the
   * executable as it is, over SFTP). Its file decompresses to exactly `sha256`: checked here
   * when it is made or found in the cache, and again on every host before the file is used; it
   * is made again when it has gone from the cache.
   */
  readonly compressed?: () => Promise<CompressedAgent | null>;
  /** Counted by `ensureAgent`; read by the metrics. */
  readonly copies?: AgentCopyStats;
  /** Drops the compressed form (a host found it did not decompress to `sha256`): later copies go uncompressed. */
  readonly dropCompressed?: () => void;
}

export interface LoadAgentOptions {
  /** Folder for the compressed copy, keyed by the executable's sha256 (default: a folder in the OS temp dir). */
  readonly cacheDir?: string;
  /** Whether to make the compressed form (default true). */
  readonly compress?: boolean;
  /** Told once when the compressed form cannot be made (no `zstd` on this machine, say). */
  readonly onCompressFailed?: (reason: string) => void;
}

/**
 * zstd level 3: measured on the 83 MiB agent, 29 MiB in ~3.6 s (level 9: 26.6 MiB in 27 s;
 * gzip -6: 30 MiB in 13 s, and 8× slower to decompress on the host).
 */
const ZSTD_LEVEL = '-3';

/** Tries to read one whole version of an executable that is being replaced in place. */
const READ_ATTEMPTS = 5;
const REREAD_AFTER_MS = 500;

/**
 * The executable's size and SHA-256 from one read, retried while the file changes under it (an
 * upgrade or a build writing it in place): the size is what was hashed, never a separate stat.
 */
async function readWhole(path: string): Promise<{ size: number; sha256: string } | null> {
  for (let attempt = 1; ; attempt += 1) {
    const before = await stat(path).catch(() => null);
    if (!before?.isFile()) {
      return null;
    }
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(path)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const after = await stat(path).catch(() => null);
    if (after && after.size === size && after.mtimeMs === before.mtimeMs && after.ino === before.ino) {
      return { size, sha256: hash.digest('hex') };
    }
    if (attempt === READ_ATTEMPTS) {
      throw new Error(`the agent executable ${path} kept changing while it was read`);
    }
    await new Promise((wake) => setTimeout(wake, REREAD_AFTER_MS));
  }
}

/** Reads the agent executable once at start; null when it has not been built. */
export async function loadAgentBinary(path: string, options: LoadAgentOptions = {}): Promise<AgentBinary | null> {
  const whole = await readWhole(path);
  if (!whole) {
    return null;
  }
  const { size, sha256 } = whole;
  if (options.compress === false) {
    return { path, size, sha256, copies: { streamed: 0, streamedBytes: 0, sftp: 0, sftpBytes: 0 } };
  }
  const cacheDir = options.cacheDir ?? join(tmpdir(), 'ccos-scaler-agent-cache');
  const make = () =>
    compressedAgent(path, sha256, cacheDir).catch((error: unknown) => {
      options.onCompressFailed?.(error instanceof Error ? error.message : String(error));
      return null;
    });
  // Started now, in another process, so it is ready (or nearly) when the first host needs it.
  let compressed: Promise<CompressedAgent | null> | null = make();
  const current = async (): Promise<CompressedAgent | null> => {
    const made = await compressed;
    if (!made) {
      return null;
    }
    // In use: a service of another build pruning the cache keeps it (see pruneCache).
    const now = new Date();
    if (await utimes(made.path, now, now).then(() => stat(made.path)).then((found) => found.size === made.bytes, () => false)) {
      return made;
    }
    compressed = make();
    return compressed;
  };
  return {
    path,
    size,
    sha256,
    copies: { streamed: 0, streamedBytes: 0, sftp: 0, sftpBytes: 0 },
    compressed: () => (compressed ? current() : Promise.resolve(null)),
    dropCompressed: () => {
      compressed = null;
    },
  };
}

async function compressedAgent(path: string, sha256: string, cacheDir: string): Promise<CompressedAgent> {
  await mkdir(cacheDir, { recursive: true, mode: 0o700 });
  const cached = join(cacheDir, `boot-worker-${sha256}.zst`);
  const found = await stat(cached).catch(() => null);
  if (found?.isFile() && (await zstdDecompressedSha256(cached).catch(() => null)) === sha256) {
    return { codec: 'zstd', path: cached, bytes: found.size };
  }
  const temporary = `${cached}.${randomBytes(6).toString('hex')}`;
  try {
    await run('zstd', [ZSTD_LEVEL, '-q', '-f', '-o', temporary, '--', path], null);
    await chmod(temporary, 0o600);
    if ((await zstdDecompressedSha256(temporary)) !== sha256) {
      throw new Error('the zstd copy of the agent does not decompress to the executable');
    }
    await rename(temporary, cached);
  } finally {
    await rm(temporary, { force: true });
  }
  await pruneCache(cacheDir, cached);
  return { codec: 'zstd', path: cached, bytes: (await stat(cached)).size };
}

/** Copies of earlier builds unused for a day go (each is ~30 MiB); a service using one touches it at each use. */
async function pruneCache(cacheDir: string, keep: string): Promise<void> {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of await readdir(cacheDir).catch(() => [])) {
    const path = join(cacheDir, name);
    if (path !== keep && /^boot-worker-[0-9a-f]{64}\.zst$/.test(name) && ((await stat(path).catch(() => null))?.mtimeMs ?? Infinity) < dayAgo) {
      await rm(path, { force: true });
    }
  }
}

async function zstdDecompressedSha256(compressedPath: string): Promise<string> {
  const hash = createHash('sha256');
  await run('zstd', ['-dcq', '--', compressedPath], null, (chunk) => hash.update(chunk));
  return hash.digest('hex');
}

/** Runs a command with `input` on stdin; its stdout goes to `onChunk`, or is returned whole. */
function run(command: string, args: string[], input: Buffer | null, onChunk?: (chunk: Buffer) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (onChunk ? onChunk(chunk) : chunks.push(chunk)));
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-300)));
    child.on('error', (error) => reject(new Error(`cannot run ${command}: ${error.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${command} exited with ${String(code)}: ${stderr.trim()}`))));
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}
