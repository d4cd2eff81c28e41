import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeFileSystem } from './file-system';

describe('NodeFileSystem.openAppend', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'append-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every chunk in order, across gathered batches, once closed', async () => {
    const path = join(dir, 'part');
    const chunks = Array.from({ length: 200 }, (_, index) => randomBytes(16 * 1024 + index));
    const sink = await new NodeFileSystem().openAppend(path, { truncate: true });
    for (const chunk of chunks) {
      await sink.write(chunk);
    }
    await sink.close();
    expect((await readFile(path)).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('has everything on disk after sync, and appends to what was there', async () => {
    const path = join(dir, 'part');
    await writeFile(path, 'head-');
    const sink = await new NodeFileSystem().openAppend(path);
    await sink.write(Buffer.from('tail'));
    await sink.sync();
    expect(await readFile(path, 'utf8')).toBe('head-tail');
    await sink.close();
    expect(await readFile(path, 'utf8')).toBe('head-tail');
  });
});
