import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLabLock } from '@ccos/tools/lab';

/**
 * The lab lock: a process started by the holder shares it (a test that holds it around a
 * file can start a demo, whose lab start takes it too); any other process, and the
 * registry lock (never shared), wait until the holder lets go.
 */
describe('lab lock', () => {
  let dir = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-lab-lock-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts the take-lock fixture; tells what it printed so far and when it is done. */
  function takeLock(path: string, env: NodeJS.ProcessEnv, inherit: boolean): { output: () => string; done: Promise<void> } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/lab/fixtures/take-lock.ts', path, inherit ? 'inherit' : 'no-inherit'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const done = new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`take-lock exited ${code}: ${output}`)))));
    return { output: () => output, done };
  }

  it('is shared with the holder\'s children, and only with them', async () => {
    const path = join(dir, 'lab.lock');
    const inheritedBefore = process.env['CCOS_LAB_LOCK_TOKEN'];
    const release = await acquireLabLock({ path });
    const child = takeLock(path, process.env, true);
    await child.done;
    expect(child.output()).toBe('asking\ngot\n');
    expect(existsSync(path)).toBe(true);

    const { CCOS_LAB_LOCK_TOKEN: _token, ...withoutToken } = process.env;
    const stranger = takeLock(path, withoutToken, true);
    const notShared = takeLock(path, process.env, false);
    await expect.poll(() => [stranger.output(), notShared.output()], { timeout: 20_000 }).toEqual(['asking\n', 'asking\n']);
    await new Promise((wake) => setTimeout(wake, 500));
    expect([stranger.output(), notShared.output()]).toEqual(['asking\n', 'asking\n']);
    await release();
    await Promise.all([stranger.done, notShared.done]);
    expect([stranger.output(), notShared.output()]).toEqual(['asking\ngot\n', 'asking\ngot\n']);
    expect(existsSync(path)).toBe(false);
    expect(process.env['CCOS_LAB_LOCK_TOKEN']).toBe(inheritedBefore);
  });
});
