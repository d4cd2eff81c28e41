import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/api-process';
import { acquireLabLock } from '../support/lab-lock';

describe('npm run demo', () => {
  let releaseLab: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    releaseLab = await acquireLabLock();
  }, 700_000);
  afterAll(async () => {
    await releaseLab();
  });

  it('brings up the cluster, the hosts and the service with the cluster registered, and tears everything down on Ctrl+C', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ccos-demo-'));
    const port = await freePort('0.0.0.0');
    const demo = spawn('npx', ['tsx', 'tools/demo/src/main.ts'], {
      env: { ...process.env, PORT: String(port), DEMO_DATA_DIR: dataDir, DEMO_HOSTS: '2', ADMIN_PASSWORD: 'demo-test-password' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the test can send SIGINT to all of it as Ctrl+C does in a terminal.
      detached: true,
    });
    let output = '';
    demo.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const started = Date.now();
      while (!output.includes('demo is up') && Date.now() - started < 150_000 && demo.exitCode === null) {
        await new Promise((wake) => setTimeout(wake, 200));
      }
      expect(output, output).toContain('demo is up');
      expect(output).toMatch(/h1\s+198\.18\.0\.\d+\s+root \/ \S+/);
      const gql = async (query: string, variables: Record<string, unknown>, token?: string) =>
        (await (await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify({ query, variables }),
        })).json()) as { data: Record<string, unknown> };
      const login = await gql('mutation($p: String!) { login(username: "admin", password: $p) { token } }', { p: 'demo-test-password' });
      const token = (login.data['login'] as { token: string }).token;
      const clusters = await gql('{ clusters { name vip } }', {}, token);
      expect(clusters.data['clusters']).toEqual([{ name: 'demo', vip: expect.stringMatching(/^198\.18\.0\.\d+$/) }]);
    } finally {
      const exited = new Promise((done) => (demo.exitCode !== null ? done(null) : demo.once('exit', done)));
      process.kill(-(demo.pid ?? 0), 'SIGINT');
      const stopped = await Promise.race([exited.then(() => true), new Promise((wake) => setTimeout(() => wake(false), 30_000))]);
      if (!stopped) {
        process.kill(-(demo.pid ?? 0), 'SIGKILL');
      }
      expect(stopped, `the demo did not stop on SIGINT:\n${output}`).toBe(true);
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(execFileSync('ip', ['netns', 'list']).toString()).not.toContain('ccoslab');
  }, 240_000);
});
