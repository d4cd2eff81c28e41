import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listLabs, stopLab, subnetContains, type LabDescription } from '@ccos/tools/lab';
import { fetchWorkerConfig } from './ignition-apply';
import { labTraces, netnsInodes } from './lab-process';
import { systemSsh } from './ssh-session';

/**
 * The CLI: `up` leaves a daemon serving the VIP and writes lab.json,
 * `status` lists it, `fault` reaches that daemon, `down` removes all of it
 * (lab.json too); without root it says so.
 */
function lab(args: readonly string[], asUser?: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const node = [process.execPath, '--import', 'tsx', 'tools/lab/src/main.ts', ...args];
  const command = asUser === undefined ? node : ['setpriv', `--reuid=${asUser}`, `--regid=${asUser}`, '--clear-groups', ...node];
  return new Promise((resolve) => {
    execFile(command[0] ?? 'node', command.slice(1), { timeout: 120_000, env: { ...process.env, HOME: tmpdir() } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

/**
 * Lets other users reach the checkout while `run` runs: a checkout under a 0700 folder (such as
 * one from `mktemp -d`) is out of an unprivileged user's reach, who then could not even start
 * the CLI to be refused.
 */
async function withCheckoutReachable<T>(run: () => Promise<T>): Promise<T> {
  const changed: Array<{ path: string; mode: number }> = [];
  for (let path = process.cwd(); ; path = dirname(path)) {
    const mode = (await stat(path)).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      changed.push({ path, mode });
      await chmod(path, mode | 0o001);
    }
    if (dirname(path) === path) {
      break;
    }
  }
  try {
    return await run();
  } finally {
    for (const { path, mode } of changed) {
      await chmod(path, mode);
    }
  }
}

describe('lab CLI', () => {
  let dir = '';
  let labId: string | undefined;

  afterAll(async () => {
    if (labId !== undefined) {
      await stopLab(labId);
    }
    if (dir) {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('brings a lab up with a daemon, injects a fault through it, and takes it down', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-lab-cli-'));
    const out = join(dir, 'lab.json');
    const up = await lab(['up', '--hosts', '2', '--password', 'cli-pass', '--out', out, '--name', 'cli-test']);
    expect(up, up.stderr).toMatchObject({ code: 0 });
    const description = JSON.parse(await readFile(out, 'utf8')) as LabDescription;
    labId = description.id;
    expect(up.stdout).toContain(`lab ${description.id} up`);
    expect(description).toMatchObject({ name: 'cli-test', artifactsDir: `${description.stateDir}/artifacts` });
    for (const ip of [description.gateway, description.vip, ...description.hosts.map((host) => host.ip)]) {
      expect(subnetContains(description.subnet, ip)).toBe(true);
    }
    expect(description.hosts.map(({ hostname, port, user, password }) => ({ hostname, port, user, password }))).toEqual([
      { hostname: 'h1', port: 22, user: 'root', password: 'cli-pass' },
      { hostname: 'h2', port: 22, user: 'root', password: 'cli-pass' },
    ]);
    const host = description.hosts[1];
    if (host === undefined) {
      throw new Error('expected two hosts');
    }
    expect((await systemSsh(host, { password: 'cli-pass' }, 'hostname')).stdout).toBe('h2\n');
    // The daemon owns the lab now that `up` has exited; status lists it and prints its lab.json.
    expect((await listLabs()).find((entry) => entry.id === description.id)?.owner).toMatchObject({ alive: true, command: expect.stringContaining('lab-daemon.cjs') });
    const listed = await lab(['status']);
    expect(listed.stdout).toMatch(new RegExp(`^${description.id}\\s+${description.subnet.replaceAll('.', '\\.')}\\s+cli-test\\s+2 hosts`, 'm'));
    expect(JSON.parse((await lab(['status', description.id])).stdout)).toEqual(description);

    expect((await fetchWorkerConfig(description.machineConfigServer, description.machineConfigCaCert)).status).toBe(200);
    expect((await lab(['fault', '--lab', description.id, 'mcs', 'html', '--status', '503'])).code).toBe(0);
    await expect.poll(async () => (await fetchWorkerConfig(description.machineConfigServer, description.machineConfigCaCert)).status, { timeout: 5000 }).toBe(503);
    const swap = await lab(['fault', '--lab', description.id, 'swap', 'on', 'h2']);
    expect(swap.code).toBe(0);
    expect((await lab(['exec', '--lab', description.id, 'h2', '--', 'swapon', '--show'])).stdout).toContain('/dev/dm-1');
    // A fresh OS on h2: a new machine-id, and nothing of before (its swap fault included); `down` below still finds no trace.
    const machineIdOf = async () => (await lab(['exec', '--lab', description.id, 'h2', '--', 'cat', '/etc/machine-id'])).stdout.trim();
    const machineIdBefore = await machineIdOf();
    const reinstalled = await lab(['reinstall', '--lab', description.id, 'h2']);
    expect(reinstalled.code, reinstalled.stderr).toBe(0);
    const machineId = await machineIdOf();
    expect(machineId).not.toBe(machineIdBefore);
    expect(reinstalled.stdout).toContain(`h2: reinstalled; machine-id ${machineId}\n`);
    expect((await lab(['exec', '--lab', description.id, 'h2', '--', 'swapon', '--show'])).stdout).toBe('');
    const latency = await lab(['fault', '--lab', description.id, 'latency', 'h1', '100ms']);
    expect(latency.code === 0 || /netem is not available/.test(latency.stderr)).toBe(true);

    const inodes = netnsInodes(description);
    const down = await lab(['down', description.id]);
    expect(down, down.stderr).toMatchObject({ code: 0 });
    labId = undefined;
    expect(existsSync(out)).toBe(false);
    expect(labTraces(description, inodes)).toEqual([]);
    await expect(fetchWorkerConfig(description.machineConfigServer, description.machineConfigCaCert)).rejects.toThrow();
    expect((await lab(['down', description.id])).code).toBe(1);
  });

  it('refuses to run without root, saying why', async () => {
    const result = await withCheckoutReachable(() => lab(['up', '--hosts', '1'], 65534));
    expect(result.code).toBe(77);
    expect(result.stderr).toMatch(/needs root/);
  });
});
