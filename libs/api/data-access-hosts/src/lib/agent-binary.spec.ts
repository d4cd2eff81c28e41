import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentBinary } from './agent-binary';

describe('loadAgentBinary: the zstd form streamed to hosts', () => {
  let dir = '';
  let path = '';
  let content = Buffer.alloc(0);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-binary-'));
    path = join(dir, 'boot-worker');
    content = Buffer.concat([randomBytes(256 * 1024), Buffer.from('node '.repeat(200_000))]);
    await writeFile(path, content, { mode: 0o755 });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes a zstd copy that decompresses to the executable, caches it by sha256, and replaces a corrupt cache', async () => {
    const cacheDir = join(dir, 'cache');
    const agent = await loadAgentBinary(path, { cacheDir });
    const sha256 = createHash('sha256').update(content).digest('hex');
    expect(agent).toMatchObject({ path, size: content.length, sha256 });
    const compressed = await agent?.compressed?.();
    expect(compressed?.codec).toBe('zstd');
    // A file of the cache, sent from disk: no copy of it is kept in memory.
    expect(compressed?.path).toBe(join(cacheDir, `boot-worker-${sha256}.zst`));
    expect(compressed?.bytes).toBeLessThan(content.length / 2);
    expect(compressed?.bytes).toBe((await readFile(compressed?.path ?? '')).length);
    expect(execFileSync('zstd', ['-dcq', '--', compressed?.path ?? ''], { maxBuffer: 8 * 1024 * 1024 }).equals(content)).toBe(true);
    expect(await readdir(cacheDir)).toEqual([`boot-worker-${sha256}.zst`]);
    expect((await stat(compressed?.path ?? '')).mode & 0o777).toBe(0o600);

    // A copy of an earlier build unused for a day goes when a new one is made; a recent one stays.
    const old = join(cacheDir, `boot-worker-${'a'.repeat(64)}.zst`);
    const recent = join(cacheDir, `boot-worker-${'b'.repeat(64)}.zst`);
    await writeFile(old, 'x');
    await writeFile(recent, 'x');
    await utimes(old, new Date(Date.now() - 2 * 24 * 3600_000), new Date(Date.now() - 2 * 24 * 3600_000));

    // A cache file that does not decompress to the executable is never used.
    await writeFile(join(cacheDir, `boot-worker-${sha256}.zst`), execFileSync('zstd', ['-q', '-c'], { input: Buffer.from('not the agent') }));
    const reloaded = await loadAgentBinary(path, { cacheDir });
    const again = await reloaded?.compressed?.();
    expect(execFileSync('zstd', ['-dcq', '--', again?.path ?? ''], { maxBuffer: 8 * 1024 * 1024 }).equals(content)).toBe(true);
    expect((await readdir(cacheDir)).sort()).toEqual([`boot-worker-${'b'.repeat(64)}.zst`, `boot-worker-${sha256}.zst`].sort());

    // Gone from the cache (another build's service pruned it, someone cleaned the folder): made again at the next use.
    await rm(join(cacheDir, `boot-worker-${sha256}.zst`));
    const remade = await reloaded?.compressed?.();
    expect(execFileSync('zstd', ['-dcq', '--', remade?.path ?? ''], { maxBuffer: 8 * 1024 * 1024 }).equals(content)).toBe(true);
  });

  it('says why and copies uncompressed when it cannot make the zstd form; dropCompressed turns it off', async () => {
    const reasons: string[] = [];
    const agent = await loadAgentBinary(path, { cacheDir: join(path, 'not-a-folder'), onCompressFailed: (reason) => reasons.push(reason) });
    expect(await agent?.compressed?.()).toBeNull();
    expect(reasons).toHaveLength(1);
    const working = await loadAgentBinary(path, { cacheDir: join(dir, 'cache') });
    working?.dropCompressed?.();
    expect(await working?.compressed?.()).toBeNull();
  });

  it('describes one whole version of an executable written while it is read, never a size from one and a hash from another', async () => {
    const growing = join(dir, 'growing-boot-worker');
    await writeFile(growing, randomBytes(1024 * 1024));
    let appends = 0;
    const writer = setInterval(() => {
      appends += 1;
      if (appends === 15) {
        clearInterval(writer);
      }
      void appendFile(growing, randomBytes(1024 * 1024));
    }, 20);
    const agent = await loadAgentBinary(growing, { compress: false });
    clearInterval(writer);
    const final = await readFile(growing);
    expect(agent?.size).toBeGreaterThan(0);
    expect(agent?.sha256).toBe(createHash('sha256').update(final.subarray(0, agent?.size)).digest('hex'));
  });
});
