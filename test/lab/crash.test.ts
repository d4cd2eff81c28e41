import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { LAB_PREFIX, LAB_STATE_DIR, startLab, stopLab } from '@ccos/tools/lab';
import { systemSsh } from './ssh-session';

/** A lab whose owner died (SIGKILL) is cleaned up by the next `up`, and by `down`. */
function startAndKill(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/lab/fixtures/start-lab-and-wait.ts', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().startsWith('up')) {
        child.kill('SIGKILL');
      }
    });
    child.on('exit', () => resolve());
    child.on('error', reject);
  });
}

describe('lab after a crash', () => {
  afterAll(async () => {
    await stopLab();
  });

  it('removes the leftovers of a killed lab on the next up and on down', async () => {
    await startAndKill();
    // The owner is dead but its hosts live on.
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(`${LAB_PREFIX}-h2`);
    const lab = await startLab({ hosts: 1 });
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(`${LAB_PREFIX}-h2`);
    const host = lab.hosts[0];
    expect(host).toBeDefined();
    if (host !== undefined) {
      expect((await systemSsh(host, { identityFile: lab.privateKeyPath }, 'hostname')).stdout).toBe('h1\n');
    }
    await lab.stop();

    await startAndKill();
    await stopLab();
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(LAB_PREFIX);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(LAB_STATE_DIR);
    expect(existsSync(LAB_STATE_DIR)).toBe(false);
  });
});
