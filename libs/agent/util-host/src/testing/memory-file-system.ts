import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { FileSink, FileSystem, PathInfo, WriteOptions } from '../lib/file-system';

type Node =
  | { type: 'file'; data: Buffer; mode: number; uid: number; gid: number }
  | { type: 'directory'; mode: number; uid: number; gid: number }
  | { type: 'symlink'; target: string; mode: number; uid: number; gid: number };

function fsError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: ${syscall} '${path}'`);
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  return error;
}

/**
 * An in-memory filesystem with POSIX-ish rules (a parent folder must exist
 * to write a file), plus failure injection: `failWith('ENOSPC', (p) => ...)`.
 */
export class MemoryFileSystem implements FileSystem {
  private readonly nodes = new Map<string, Node>([['/', { type: 'directory', mode: 0o755, uid: 0, gid: 0 }]]);
  private failures: { readonly code: string; readonly when: (path: string, op: string) => boolean }[] = [];
  /** Paths fsynced, in order (spool durability tests). */
  readonly synced: string[] = [];

  /** Seeds files (and their folders) for a test. */
  seed(files: Readonly<Record<string, string | Uint8Array>>, mode = 0o644): this {
    for (const [path, data] of Object.entries(files)) {
      this.mkdirSync(posix.dirname(path), 0o755);
      this.nodes.set(path, { type: 'file', data: Buffer.from(data), mode, uid: 0, gid: 0 });
    }
    return this;
  }

  failWith(code: string, when: (path: string, op: string) => boolean): this {
    this.failures.push({ code, when });
    return this;
  }

  clearFailures(): void {
    this.failures = [];
  }

  /** Text of a file, or undefined. */
  text(path: string): string | undefined {
    const node = this.nodes.get(path);
    return node?.type === 'file' ? node.data.toString('utf8') : undefined;
  }

  node(path: string): Readonly<Node> | undefined {
    return this.nodes.get(path);
  }

  paths(): string[] {
    return [...this.nodes.keys()].sort();
  }

  async readFile(path: string): Promise<Buffer> {
    this.check(path, 'read');
    const node = this.resolveNode(path);
    if (node === undefined) {
      throw fsError('ENOENT', 'open', path);
    }
    if (node.type !== 'file') {
      throw fsError('EISDIR', 'read', path);
    }
    return Buffer.from(node.data);
  }

  async writeFileAtomic(path: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
    this.check(path, 'write');
    this.requireParent(path);
    const previous = this.nodes.get(path);
    this.nodes.set(path, { type: 'file', data: Buffer.from(data), mode: options.mode ?? 0o644, uid: previous?.uid ?? 0, gid: previous?.gid ?? 0 });
    if (options.sync) {
      this.synced.push(path);
    }
  }

  async appendFile(path: string, data: string | Uint8Array, options: { readonly sync?: boolean; readonly mode?: number } = {}): Promise<void> {
    this.check(path, 'write');
    this.requireParent(path);
    const node = this.nodes.get(path);
    const old = node?.type === 'file' ? node.data : Buffer.alloc(0);
    this.nodes.set(path, { type: 'file', data: Buffer.concat([old, Buffer.from(data)]), mode: node?.mode ?? options.mode ?? 0o600, uid: 0, gid: 0 });
    if (options.sync) {
      this.synced.push(path);
    }
  }

  async openAppend(path: string, options: { readonly truncate?: boolean; readonly mode?: number } = {}): Promise<FileSink> {
    this.check(path, 'open');
    this.requireParent(path);
    const node = this.nodes.get(path);
    if (options.truncate || node?.type !== 'file') {
      this.nodes.set(path, { type: 'file', data: Buffer.alloc(0), mode: options.mode ?? 0o644, uid: 0, gid: 0 });
    }
    return {
      write: async (chunk) => {
        this.check(path, 'write');
        const current = this.nodes.get(path);
        if (current?.type !== 'file') {
          throw fsError('EBADF', 'write', path);
        }
        current.data = Buffer.concat([current.data, Buffer.from(chunk)]);
      },
      sync: async () => {
        this.synced.push(path);
      },
      close: async () => undefined,
    };
  }

  async mkdir(path: string, options: { readonly mode?: number } = {}): Promise<void> {
    this.check(path, 'mkdir');
    this.mkdirSync(path, options.mode ?? 0o755);
  }

  async stat(path: string): Promise<PathInfo | null> {
    this.check(path, 'stat');
    const node = this.nodes.get(path);
    if (node === undefined) {
      return null;
    }
    return { type: node.type, size: node.type === 'file' ? node.data.length : 0, mode: node.mode, uid: node.uid, gid: node.gid };
  }

  async chmod(path: string, mode: number): Promise<void> {
    const node = this.nodes.get(path);
    if (node === undefined) {
      throw fsError('ENOENT', 'chmod', path);
    }
    node.mode = mode;
  }

  async chown(path: string, uid: number, gid: number): Promise<void> {
    const node = this.nodes.get(path);
    if (node === undefined) {
      throw fsError('ENOENT', 'chown', path);
    }
    node.uid = uid;
    node.gid = gid;
  }

  async rename(from: string, to: string): Promise<void> {
    this.check(to, 'rename');
    const node = this.nodes.get(from);
    if (node === undefined) {
      throw fsError('ENOENT', 'rename', from);
    }
    this.requireParent(to);
    this.nodes.delete(from);
    this.nodes.set(to, node);
  }

  async remove(path: string): Promise<void> {
    this.check(path, 'remove');
    for (const key of [...this.nodes.keys()]) {
      if (key === path || key.startsWith(`${path}/`)) {
        this.nodes.delete(key);
      }
    }
  }

  async readdir(path: string): Promise<string[]> {
    const node = this.nodes.get(path);
    if (node?.type !== 'directory') {
      throw fsError(node === undefined ? 'ENOENT' : 'ENOTDIR', 'scandir', path);
    }
    const prefix = path === '/' ? '/' : `${path}/`;
    return [...this.nodes.keys()]
      .filter((key) => key.startsWith(prefix) && key !== path && !key.slice(prefix.length).includes('/'))
      .map((key) => key.slice(prefix.length))
      .sort();
  }

  async symlink(target: string, path: string): Promise<void> {
    this.check(path, 'symlink');
    this.requireParent(path);
    if (this.nodes.has(path)) {
      throw fsError('EEXIST', 'symlink', path);
    }
    this.nodes.set(path, { type: 'symlink', target, mode: 0o777, uid: 0, gid: 0 });
  }

  async readlink(path: string): Promise<string> {
    const node = this.nodes.get(path);
    if (node?.type !== 'symlink') {
      throw fsError('EINVAL', 'readlink', path);
    }
    return node.target;
  }

  async sha256(path: string): Promise<string> {
    return createHash('sha256').update(await this.readFile(path)).digest('hex');
  }

  private resolveNode(path: string): Node | undefined {
    let node = this.nodes.get(path);
    for (let hops = 0; node?.type === 'symlink' && hops < 8; hops += 1) {
      node = this.nodes.get(posix.resolve(posix.dirname(path), node.target));
    }
    return node;
  }

  private mkdirSync(path: string, mode: number): void {
    const parts = path.split('/').filter(Boolean);
    let current = '';
    for (const part of parts) {
      current = `${current}/${part}`;
      const node = this.nodes.get(current);
      if (node === undefined) {
        this.nodes.set(current, { type: 'directory', mode, uid: 0, gid: 0 });
      } else if (node.type !== 'directory') {
        throw fsError('ENOTDIR', 'mkdir', current);
      }
    }
  }

  private requireParent(path: string): void {
    const parent = this.nodes.get(posix.dirname(path));
    if (parent?.type !== 'directory') {
      throw fsError('ENOENT', 'open', path);
    }
  }

  private check(path: string, op: string): void {
    const failure = this.failures.find((entry) => entry.when(path, op));
    if (failure !== undefined) {
      throw fsError(failure.code, op, path);
    }
  }
}
