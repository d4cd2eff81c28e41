import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterAddressGuard, type KubeClient, createKubeClient } from '@ccos/api/data-access-kube';
import { E2E_ADMIN_PASSWORD } from '../support/api-process';
import { type Run, runCli } from '../support/cli-process';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * Declarative inventory end to end: the built `ccos-scaler` against the built API, kube-sim and
 * three lab hosts. A 3-host file plans three adds on an empty cluster and apply joins them
 * (auto-approve on); the edited file (one host removed, one relabelled) plans exactly that and
 * apply does it; applying again plans no change; export round-trips. Needs the built api, cli and
 * boot-worker.
 */
let world: ScaleOutWorld;
let home = '';

function cli(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(args, { env: { HOME: home, LANG: 'en_US.UTF-8', CCOS_SERVER: `http://127.0.0.1:${world.api.port}`, ...env } });
}

const LOOPBACK = ClusterAddressGuard.allowing('loopback');
let admin: KubeClient;

/** The Node as the cluster's admin reads it; undefined once it is deleted. */
async function kubeNode(name: string) {
  try {
    return await admin.call('read', (options) => admin.core.readNode({ name }, options));
  } catch {
    return undefined;
  }
}

describe('inventory files: plan, apply, export with the CLI on lab hosts', () => {
  let file = '';
  const hosts = () => world.lab.hosts;
  const hostLine = (index: number, extra = '') => {
    const host = hosts()[index];
    return `  - {hostname: ${host.hostname}, ip: ${host.ip}, sshPort: ${host.port}, credential: {passwordFile: ${join(home, `${host.hostname}.password`)}}${extra}}\n`;
  };

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 3, name: 'inventory-cli', hostnamePrefix: 'inv', csrAutoApprove: true });
    admin = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: world.sim.adminKubeconfig ?? world.sim.kubeconfig } });
    home = await mkdtemp(join(tmpdir(), 'ccos-inventory-'));
    await writeFile(join(home, 'admin-password'), `${E2E_ADMIN_PASSWORD}\n`, { mode: 0o600 });
    for (const host of hosts()) {
      await writeFile(join(home, `${host.hostname}.password`), `${host.password}\n`, { mode: 0o600 });
      world.api.secrets.noteSecret(host.password, `lab host ${host.hostname} SSH password (read by the CLI from the file the inventory names)`);
    }
    file = join(home, 'inventory.yaml');
    expect((await cli(['login', '--username', 'admin', '--password-file', join(home, 'admin-password')])).code).toBe(0);
  }, 600_000);

  afterAll(async () => {
    admin?.close();
    await world?.stop();
    if (home) {
      await rm(home, { recursive: true, force: true });
    }
  }, 120_000);

  it('plans three adds on an empty cluster (exit 5), and apply joins the three hosts', async () => {
    const clusters = JSON.parse((await cli(['clusters', 'list', '--output', 'json'])).stdout) as Array<{ name: string }>;
    const cluster = clusters[0].name;
    await writeFile(file, `apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: ${cluster}\nhosts:\n${hostLine(0, ', labels: {zone: a}')}${hostLine(1, ', labels: {zone: a}')}${hostLine(2)}`);
    const plan = await cli(['plan', '-f', file]);
    expect(plan, plan.stderr).toMatchObject({ code: 5 });
    expect(plan.stdout).toContain(`Plan for cluster ${cluster}: 3 to add and install, 0 to install, 0 to relabel, 0 to remove, 0 to forget; 0 unchanged.`);
    expect(plan.stdout.split('\n').filter((line) => line.startsWith('  + add'))).toEqual(hosts().map((host, index) => `  + add       ${host.hostname} ${host.ip} ${index < 2 ? 'zone=a' : '-'}`));

    const apply = await cli(['apply', '-f', file, '--yes']);
    expect(apply, apply.stderr + apply.stdout).toMatchObject({ code: 0 });
    expect(apply.stdout).toContain('Done: the cluster is as the file says.');
    for (const host of hosts()) {
      expect(apply.stdout).toContain(`${host.hostname}: JOINED JOINED`);
    }
    expect((await kubeNode('inv1'))?.metadata?.labels?.['zone']).toBe('a');
    const again = await cli(['plan', '-f', file]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining('No changes: the cluster is as the file says.') });
  }, 600_000);

  it('plans exactly one removal and one label change for the edited file, applies them, then plans no change; export round-trips', async () => {
    const cluster = (JSON.parse((await cli(['clusters', 'list', '--output', 'json'])).stdout) as Array<{ name: string }>)[0].name;
    const removed = hosts()[2];
    await writeFile(file, `apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: ${cluster}\nhosts:\n${hostLine(0, ', labels: {zone: a}')}${hostLine(1, ', labels: {zone: b}')}  - {hostname: ${removed.hostname}, remove: true}\n`);
    const plan = await cli(['plan', '-f', file, '--output', 'json']);
    expect(plan.code).toBe(5);
    const planned = JSON.parse(plan.stdout) as { changes: Array<{ kind: string; hostname: string; removal: { allowed: boolean } | null }> };
    expect(planned.changes.map(({ kind, hostname }) => `${kind} ${hostname}`)).toEqual([`RELABEL ${hosts()[1].hostname}`, `REMOVE ${removed.hostname}`]);
    expect(planned.changes[1].removal).toMatchObject({ allowed: true });
    const chinese = await cli(['plan', '-f', file], { LANG: 'zh_CN.UTF-8' });
    expect(chinese.stdout).toContain(`集群 ${cluster} 的计划：录入并安装 0 台，安装 0 台，修改标签 1 台，移除 1 台，删除记录 0 台；1 台无变化。`);
    expect(chinese.stdout).toContain(`  ~ 修改标签  ${hosts()[1].hostname} zone=a -> zone=b`);

    const apply = await cli(['apply', '-f', file, '--yes']);
    expect(apply, apply.stderr + apply.stdout).toMatchObject({ code: 0 });
    expect(apply.stdout).toContain(`${removed.hostname}: removal SUCCEEDED`);
    expect((await kubeNode(hosts()[1].hostname))?.metadata?.labels?.['zone']).toBe('b');
    expect(await kubeNode(removed.hostname)).toBeUndefined();
    expect(await cli(['apply', '-f', file, '--yes'])).toMatchObject({ code: 0, stdout: expect.stringContaining('No changes') });

    const exported = await cli(['inventory', 'export']);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe(
      `apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: ${cluster}\nhosts:\n` +
        hosts().slice(0, 2).map((host, index) => `  - hostname: ${host.hostname}\n    ip: ${host.ip}\n    labels:\n      zone: ${index === 0 ? 'a' : 'b'}\n`).join(''),
    );
    const exportedFile = join(home, 'exported.yaml');
    await writeFile(exportedFile, exported.stdout);
    expect(await cli(['plan', '-f', exportedFile])).toMatchObject({ code: 0, stdout: expect.stringContaining('No changes') });
  }, 600_000);

  it('refuses a file with an inline password, naming it, and sends nothing for a credential it cannot read', async () => {
    const cluster = (JSON.parse((await cli(['clusters', 'list', '--output', 'json'])).stdout) as Array<{ name: string }>)[0].name;
    await writeFile(file, `apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: ${cluster}\nhosts:\n  - {hostname: extra1, ip: ${hosts()[2].ip}, password: in-the-file}\n`);
    const inline = await cli(['plan', '-f', file]);
    expect(inline.code).toBe(1);
    expect(inline.stderr).toContain('hosts[0] (extra1): "password" would put a secret into the file');
    await writeFile(file, `apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: ${cluster}\nhosts:\n  - {hostname: extra1, ip: ${hosts()[2].ip}, credential: {passwordEnv: NOT_SET_ANYWHERE}}\n`);
    const unreadable = await cli(['apply', '-f', file, '--yes']);
    expect(unreadable).toMatchObject({ code: 2, stderr: expect.stringContaining('the credential of extra1 cannot be read from $NOT_SET_ANYWHERE; nothing was sent') });
    expect(JSON.parse((await cli(['nodes', 'list', '--output', 'json'])).stdout).map((node: { hostname: string }) => node.hostname)).not.toContain('extra1');
  }, 120_000);
});
