import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ccos/shared/util-timing/testing';
import { createCertificateAuthority } from '@ccos/tools/lab';

/**
 * The built agent executable as the installer service drives it over SSH:
 * `version`, a bad config, and `start` detaching into its own session
 * (parent back at once, agent running on, pid file) until `stop` ends it.
 * No installer service runs here: the agent's API address is a closed
 * port, so it keeps its events in the spool, as during an outage.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXE = join(ROOT, 'dist/apps/boot-worker/boot-worker');

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

function agent(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(EXE, args, { env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 9;
}

describe('boot-worker executable', () => {
  let dir = '';
  let serviceCa = '';
  const pids: number[] = [];

  beforeAll(async () => {
    if (!existsSync(EXE)) {
      execFileSync('npx', ['nx', 'run', 'boot-worker:build', '--outputStyle=static'], {
        cwd: ROOT,
        env: { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false' },
        stdio: 'inherit',
        timeout: 170_000,
      });
    }
    dir = await mkdtemp(join(tmpdir(), 'ccos-agent-cli-'));
    serviceCa = (await createCertificateAuthority('ccos-scaler agent channel')).certPem;
  });

  afterAll(async () => {
    for (const pid of pids.filter(alive)) {
      process.kill(pid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  });

  async function writeConfig(name: string, change: Record<string, unknown> = {}): Promise<{ file: string; stateDir: string }> {
    const stateDir = join(dir, name);
    const file = join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify({
      apiUrl: `https://127.0.0.1:${await closedPort()}`,
      serviceTls: { caCertificates: serviceCa },
      artifactManifestSha256: '0'.repeat(64),
      runId: `run-${name}`,
      token: 'agt_e2e-test-token-0001',
      nodeName: 'h1',
      nodeIp: '198.18.0.11',
      vip: '127.0.0.1',
      labels: [{ key: 'disk-type', value: 'ssd' }],
      taints: [],
      startStep: 'PREFLIGHT',
      machineConfigCaCert: null,
      stateDir,
      // Never satisfiable: the agent must stop at PREFLIGHT and never touch this machine.
      requirements: { minKernel: '99.0', minMemoryBytes: 1, minCpus: 4096, maxClockSkewSeconds: 5 },
      timeouts: { nodeReadySeconds: 60 },
      ...change,
    }), { mode: 0o600 });
    return { file, stateDir };
  }

  it('prints its version with nothing but itself (empty environment)', async () => {
    const plain = await agent(['version']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^boot-worker \d+\.\d+\.\d+\+[0-9a-z]+\n$/);
    const json = await agent(['version', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ version: plain.stdout.trim().split(' ')[1], node: expect.stringMatching(/^v20\./) });
    expect(existsSync(`${EXE}.sha256`)).toBe(true);
  });

  it('refuses a bad config with exit code 2 and names every problem', async () => {
    const { file, stateDir } = await writeConfig('bad', { token: '', vip: '198.18.0.300', startStep: 'REBOOT', labels: [{ key: 'bad key', value: 'x' }] });
    for (const command of ['run', 'start']) {
      const ran = await agent([command, '--config', file]);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(`the config ${file} is invalid`);
      for (const field of ['token', 'vip "198.18.0.300"', 'startStep "REBOOT"', 'label key "bad key"']) {
        expect(ran.stderr).toContain(field);
      }
    }
    expect(existsSync(join(stateDir, 'agent.pid'))).toBe(false);
    const missing = await agent(['run', '--config', join(dir, 'nope.json')]);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain('cannot read the config');
    const usage = await agent(['start']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('start needs --config FILE');
  });

  it('start detaches (own session, pid file, parent back at once); stop ends it after a final FAILED event', async () => {
    const { file, stateDir } = await writeConfig('detach');
    const started = await agent(['start', '--config', file]);
    expect(started.code, started.stderr).toBe(0);
    const pid = Number(/^started pid (\d+)\n$/.exec(started.stdout)?.[1]);
    pids.push(pid);
    expect(started.ms).toBeLessThan(5_000);
    expect(Number((await readFile(join(stateDir, 'agent.pid'), 'utf8')).trim())).toBe(pid);
    // The parent has exited; the agent runs on in a session of its own (setsid), so a hung-up SSH
    // session cannot take it along. It proves it by working: events wait in the spool while the
    // service is unreachable.
    const spooled = async () => (await readFile(join(stateDir, 'spool.jsonl'), 'utf8').catch(() => ''))
      .trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; event?: { seq: number; step: string; status: string; message: string; detail: { code?: string } | null } });
    const first = await eventually(async () => (await spooled())[0], { what: 'the first spooled event', timeoutMs: 10_000, intervalMs: 100 });
    expect(first.event).toMatchObject({ seq: 1, step: 'PREFLIGHT', status: 'STARTED' });
    expect(alive(pid)).toBe(true);
    const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^\d+ \(.*\) /, '').split(' ');
    expect(Number(stat[3])).toBe(pid);
    const again = await agent(['start', '--config', file]);
    expect(again).toMatchObject({ code: 0, stdout: `already running pid ${pid}\n` });

    const stopped = await agent(['stop', '--config', file]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe(`stopped pid ${pid}\n`);
    expect(stopped.ms).toBeLessThan(15_000);
    expect(alive(pid)).toBe(false);
    // On SIGTERM the agent reports the step it was in as stopped, in the spool for a later start to deliver.
    const last = (await spooled()).filter((line) => line.type === 'event').at(-1)?.event;
    expect(last).toMatchObject({ step: 'PREFLIGHT', status: 'FAILED', detail: { code: 'TERMINATED' } });
    expect(existsSync(join(stateDir, 'agent.pid'))).toBe(false);
    const log = await readFile(join(stateDir, 'agent.log'), 'utf8');
    expect(log).toContain('SIGTERM');
    expect(log).not.toContain('agt_e2e-test-token-0001');
    expect(await agent(['stop', '--config', file])).toMatchObject({ code: 0, stdout: 'not running\n' });
  });
});
