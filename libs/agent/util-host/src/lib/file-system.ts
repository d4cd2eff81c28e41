import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';

/** What {@link FileSystem.stat} tells about a path (without following a final symlink). */
export interface PathInfo {
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  readonly size: number;
  /** Permission bits only (e.g. 0o755). */
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** An open file the agent appends to (downloads). */
export interface FileSink {
  write(chunk: Uint8Array): Promise<void>;
  /** fsync. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface WriteOptions {
  /** Permission bits of the written file (default 0o644). */
  readonly mode?: number;
  /** fsync before returning (and before the rename for {@link FileSystem.writeFileAtomic}). */
  readonly sync?: boolean;
}

/**
 * The host's filesystem as the agent uses it. Narrow on purpose: handlers
 * get an in-memory fake in unit tests.
 */
export interface FileSystem {
  readFile(path: string): Promise<Buffer>;
  /** Writes via a temporary file in the same folder and a rename, so readers never see half a file. */
  writeFileAtomic(path: string, data: string | Uint8Array, options?: WriteOptions): Promise<void>;
  appendFile(path: string, data: string | Uint8Array, options?: { readonly sync?: boolean; readonly mode?: number }): Promise<void>;
  /** Opens for appending (`truncate` empties it first); creates it when missing. */
  openAppend(path: string, options?: { readonly truncate?: boolean; readonly mode?: number }): Promise<FileSink>;
  /** Like `mkdir -p`; `mode` applies to folders it creates. */
  mkdir(path: string, options?: { readonly mode?: number }): Promise<void>;
  /** null when nothing is at the path. */
  stat(path: string): Promise<PathInfo | null>;
  chmod(path: string, mode: number): Promise<void>;
  chown(path: string, uid: number, gid: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Like `rm -rf`; fine when nothing is there. */
  remove(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  symlink(target: string, path: string): Promise<void>;
  readlink(path: string): Promise<string>;
  /** Hex sha256 of a file's contents, streamed. */
  sha256(path: string): Promise<string>;
}

/** Hex SHA-256 of contents in memory (a string as UTF-8, as it is written). */
export function sha256Of(contents: string | Uint8Array): string {
  return createHash('sha256').update(contents).digest('hex');
}

/** Bytes an append sink gathers before it writes them. */
const APPEND_BATCH_BYTES = 1024 * 1024;

/** The real filesystem. */
export class NodeFileSystem implements FileSystem {
  readFile(path: string): Promise<Buffer> {
    return fsp.readFile(path);
  }

  async writeFileAtomic(path: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
    const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
    const handle = await fsp.open(temp, 'w', options.mode ?? 0o644);
    try {
      await handle.writeFile(data);
      await handle.chmod(options.mode ?? 0o644);
      if (options.sync) {
        await handle.sync();
      }
    } finally {
      await handle.close();
    }
    try {
      await fsp.rename(temp, path);
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
  }

  async appendFile(path: string, data: string | Uint8Array, options: { readonly sync?: boolean; readonly mode?: number } = {}): Promise<void> {
    const handle = await fsp.open(path, 'a', options.mode ?? 0o600);
    try {
      await handle.appendFile(data);
      if (options.sync) {
        await handle.sync();
      }
    } finally {
      await handle.close();
    }
  }

  async openAppend(path: string, options: { readonly truncate?: boolean; readonly mode?: number } = {}): Promise<FileSink> {
    const handle = await fsp.open(path, options.truncate ? 'w' : 'a', options.mode ?? 0o644);
    // A download arrives in 16 KiB TLS records: one write (a thread-pool round trip) per record
    // cost the agent CPU, so records are gathered and written together (one writev per MiB).
    // What is written stays in order; sync and close write what is gathered first.
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      const chunks = pending;
      pending = [];
      pendingBytes = 0;
      let written = 0;
      const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      while (written < total) {
        const { bytesWritten } = await handle.writev(written === 0 ? chunks : [Buffer.concat(chunks).subarray(written)]);
        written += bytesWritten;
      }
    };
    return {
      write: async (chunk) => {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= APPEND_BATCH_BYTES) {
          await flush();
        }
      },
      sync: async () => {
        await flush();
        await handle.sync();
      },
      close: async () => {
        try {
          await flush();
        } finally {
          await handle.close();
        }
      },
    };
  }

  async mkdir(path: string, options: { readonly mode?: number } = {}): Promise<void> {
    await fsp.mkdir(path, { recursive: true, mode: options.mode ?? 0o755 });
  }

  async stat(path: string): Promise<PathInfo | null> {
    try {
      const info = await fsp.lstat(path);
      const type = info.isFile() ? 'file' : info.isDirectory() ? 'directory' : info.isSymbolicLink() ? 'symlink' : 'other';
      return { type, size: info.size, mode: info.mode & 0o7777, uid: info.uid, gid: info.gid };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
        return null;
      }
      throw error;
    }
  }

  chmod(path: string, mode: number): Promise<void> {
    return fsp.chmod(path, mode);
  }

  chown(path: string, uid: number, gid: number): Promise<void> {
    return fsp.lchown(path, uid, gid);
  }

  rename(from: string, to: string): Promise<void> {
    return fsp.rename(from, to);
  }

  remove(path: string): Promise<void> {
    return fsp.rm(path, { recursive: true, force: true });
  }

  readdir(path: string): Promise<string[]> {
    return fsp.readdir(path);
  }

  symlink(target: string, path: string): Promise<void> {
    return fsp.symlink(target, path);
  }

  readlink(path: string): Promise<string> {
    return fsp.readlink(path);
  }

  sha256(path: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const hash = createHash('sha256');
      createReadStream(path)
        .on('data', (chunk) => hash.update(chunk))
        .on('error', reject)
        .on('end', () => resolve(hash.digest('hex')));
    });
  }
}
