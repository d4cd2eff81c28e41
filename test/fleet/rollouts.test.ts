import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RolloutChangedDocument } from '@ccos/shared/api-schema';
import { type Alertmanager, startAlertmanager } from '../support/alertmanager';
import { latinWordsOnScreen } from '../support/chinese-text';
import { runCli } from '../support/cli-process';
import { launchChromium, openConsolePage, screenshot, signInAsAdmin } from '../support/console-browser';
import { subscribe } from '../support/graphql-subscriptions';
import { KUBECTL } from '../support/kubectl-drain';
import { sampleValue } from '../support/metrics-text';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

const run = promisify(execFile);

const ROLLOUT = 'id status reason reasonCode waitingFor nodes { nodeId nodeName phase problem problemCode rebootedAt applyRunId }';
const MANIFEST = 'state onClusterSet artifactSetVersion files { path sha256 step } drift { path expected found }';
const RUNS = 'installRuns { id purpose status startStep onlySteps steps { step status } }';

interface Rollout {
  id: string;
  status: string;
  reason: string | null;
  reasonCode: string | null;
  waitingFor: string | null;
  nodes: Array<{ nodeId: string; nodeName: string; phase: string; problem: string | null; problemCode: string | null; rebootedAt: string | null; applyRunId: string | null }>;
}

interface HostManifest {
  state: string;
  onClusterSet: boolean;
  artifactSetVersion: string | null;
  files: Array<{ path: string; sha256: string; step: string }>;
  drift: Array<{ path: string; expected: string; found: string | null }>;
}

interface InstallRun {
  id: string;
  purpose: string;
  status: string;
  startStep: string;
  onlySteps: string[] | null;
  steps: Array<{ step: string; status: string }>;
}

/** Every Node's cordon and Ready as `kubectl get nodes --watch` prints them, and the most that were out of service at once. */
class NodeWatch {
  readonly states = new Map<string, { unschedulable: boolean; ready: boolean }>();
  maxUnavailable = 0;
  lines = 0;
  private readonly process: ChildProcess;

  constructor(kubeconfig: string) {
    this.process = spawn(KUBECTL, [
      '--kubeconfig', kubeconfig, 'get', 'nodes', '--watch', '--no-headers',
      '-o', 'custom-columns=NAME:.metadata.name,UNSCHEDULABLE:.spec.unschedulable,READY:.status.conditions[?(@.type=="Ready")].status',
    ]);
    let buffer = '';
    this.process.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines.filter((text) => text.trim() !== '')) {
        const [name = '', unschedulable = '', ready = ''] = line.trim().split(/\s+/);
        this.lines += 1;
        this.states.set(name, { unschedulable: unschedulable === 'true', ready: ready === 'True' });
        const unavailable = [...this.states.values()].filter((state) => state.unschedulable || !state.ready).length;
        this.maxUnavailable = Math.max(this.maxUnavailable, unavailable);
      }
    });
  }

  stop(): void {
    this.process.kill();
  }
}

/**
 * Rollouts over real lab hosts (SSH, the lab's reboot, the stand-in kubelet, the real agent) against
 * kube-sim: never more nodes out of service than the budget (as a kubectl watch sees them), every
 * host rebooted once and back Ready and uncordoned; a PodDisruptionBudget that allows no
 * disruption pauses the rollout and says which; a rollout picks up where it was after the API is
 * killed; a unit edited by hand comes back with a REAPPLY, and a new artifact set reaches every
 * host with an UPGRADE, the agent re-running only the steps that need it.
 */
describe('rollouts: REBOOT, REAPPLY and UPGRADE under a budget on lab hosts', () => {
  let world: ScaleOutWorld;
  let alertmanager: Alertmanager;
  let browser: Browser;
  let page: Page;
  let nodeIds: string[];
  let adminKubeconfig: string;

  const bootId = async (index: number) => (await world.lab.exec(world.lab.hosts[index]?.id ?? '', ['cat', '/proc/sys/kernel/random/boot_id'])).stdout.trim();
  const rebootRequests = async (index: number) =>
    (await world.lab.exec(world.lab.hosts[index]?.id ?? '', ['journalctl', '-u', 'systemd-logind', '--no-pager'])).stdout.split('\n').filter((line) => line.includes('reboot requested')).length;
  const rollout = async (id: string) => (await world.gql<{ rollout: Rollout }>(`query($id: ID!) { rollout(id: $id) { ${ROLLOUT} } }`, { id })).data?.rollout;
  const start = async (input: Record<string, unknown>) => world.gql<{ startRollout: Rollout }>(`mutation($input: StartRolloutInput!) { startRollout(input: $input) { ${ROLLOUT} } }`, { input: { clusterId: world.clusterId, kind: 'REBOOT', ...input } });
  /** The rollout once it has `status`; one that paused or was cancelled meanwhile fails at once, with its reason. */
  const untilStatus = async (id: string, status: string, timeout = 120_000) => {
    const settled = (current: string | undefined) => current === status || (status === 'SUCCEEDED' && (current === 'PAUSED' || current === 'CANCELLED'));
    try {
      await expect.poll(async () => settled((await rollout(id))?.status), { timeout, interval: 500 }).toBe(true);
    } catch (error) {
      // Where it stands, and what the agent's runs said, instead of a bare timeout.
      throw new Error(`rollout ${id} did not become ${status}: ${JSON.stringify(await rollout(id))}; runs: ${JSON.stringify(await Promise.all(nodeIds.map(async (nodeId) => (await runsOf(nodeId))?.installRuns[0])))}`, { cause: error });
    }
    const current = (await rollout(id)) as Rollout;
    expect(current.status, `${current.reason ?? ''} ${JSON.stringify(current.nodes)}`).toBe(status);
    return current;
  };
  const kubectl = (...args: string[]) => run(KUBECTL, ['--kubeconfig', adminKubeconfig, ...args]);
  const onHost = async (index: number, path: string) => (await world.lab.exec(world.lab.hosts[index]?.id ?? '', ['sha256sum', path])).stdout.split(' ')[0];
  const hostManifest = async (nodeId: string) => (await world.gql<{ hostManifest: HostManifest | null }>(`query($n: ID!) { hostManifest(nodeId: $n) { ${MANIFEST} } }`, { n: nodeId })).data?.hostManifest;
  const runsOf = async (nodeId: string) => (await world.gql<{ node: { status: string; installRuns: InstallRun[] } }>(`query($n: ID!) { node(id: $n) { status ${RUNS} } }`, { n: nodeId })).data?.node;
  const cli = (args: string[], language = 'C.UTF-8') => runCli(args, { env: { HOME: '/nonexistent', CCOS_SERVER: world.api.url, CCOS_TOKEN: world.token, LANG: language } });

  beforeAll(async () => {
    alertmanager = await startAlertmanager();
    [world, browser] = await Promise.all([
      startScaleOutWorld({ hosts: 3, name: 'rollouts', csrAutoApprove: true, apiEnv: { ROLLOUT_INTERVAL_SECONDS: '2', ALERTMANAGER_URL: alertmanager.url }, kubelet: { heartbeatSeconds: 2 } }),
      launchChromium(),
    ]);
    ({ page } = await openConsolePage(browser));
    await signInAsAdmin(page, world.api.url);
    adminKubeconfig = join(tmpdir(), `rollouts-${world.lab.id}.kubeconfig`);
    await writeFile(adminKubeconfig, world.sim.kubeconfig);
    nodeIds = [];
    for (const index of [0, 1, 2]) {
      nodeIds.push(await world.addHost(index));
    }
    for (const nodeId of nodeIds) {
      await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
      const installed = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
      expect(installed.errors).toBeUndefined();
    }
    for (const nodeId of nodeIds) {
      await world.waitForStatus(nodeId, ['JOINED'], 240_000);
    }
  }, 420_000);

  afterAll(async () => {
    await browser?.close();
    await world?.stop();
    await alertmanager?.stop();
  });

  it('reboots every node one at a time from the cluster page: never two out of service, each rebooted once, the page live to the end', async () => {
    const before = await Promise.all([0, 1, 2].map(bootId));
    for (const nodeId of nodeIds) {
      expect((await world.gql<{ hostManifest: { state: string } | null }>('query($n: ID!) { hostManifest(nodeId: $n) { state } }', { n: nodeId })).data?.hostManifest?.state).toBe('UNINSPECTED');
    }
    const watch = new NodeWatch(adminKubeconfig);
    const live = subscribe(world.api.url, world.token, RolloutChangedDocument, { clusterId: world.clusterId });
    try {
      await expect.poll(() => watch.states.size, { timeout: 20_000 }).toBe(3);
      await page.goto(`${world.api.url}/clusters/${world.clusterId}`);
      const card = page.getByTestId('rollout');
      await card.getByText('No rollout yet.', { exact: false }).waitFor();
      const form = card.getByRole('form', { name: 'Start a rollout' });
      await form.getByRole('textbox', { name: 'Maintenance window (cron, optional)' }).fill('every night');
      await form.getByRole('button', { name: 'Reboot nodes' }).click();
      // The API's refusal shows on its field, and nothing starts.
      await form.getByText('is not a cron expression', { exact: false }).waitFor();
      await form.getByRole('textbox', { name: 'Maintenance window (cron, optional)' }).fill('');
      await form.getByRole('textbox', { name: 'At most this many nodes out of service at once' }).fill('1');
      await form.getByRole('button', { name: 'Preview' }).click();
      const preview = form.getByTestId('rollout-preview');
      await preview.getByText('3 nodes in this order, at most 1 out of service at once.').waitFor();
      expect(await preview.locator('li[data-node]').evaluateAll((items) => items.map((item) => item.getAttribute('data-node')))).toEqual(world.lab.hosts.map((host) => host.hostname));
      await form.getByRole('button', { name: 'Reboot nodes' }).click();
      await page.getByText('Rollout started.').first().waitFor();
      const listed = await world.gql<{ rollouts: Rollout[] }>(`query($c: ID!) { rollouts(clusterId: $c) { ${ROLLOUT} } }`, { c: world.clusterId });
      expect(listed.data?.rollouts).toHaveLength(1);
      const id = listed.data?.rollouts[0]?.id ?? '';
      expect(listed.data?.rollouts[0]?.nodes.map((node) => node.nodeName)).toEqual(world.lab.hosts.map((host) => host.hostname));

      // A second rollout on the same cluster is refused while this one runs.
      const second = await start({ maxUnavailable: 1 });
      expect(second.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
      expect(second.errors?.[0]?.message).toContain(id);

      const done = await untilStatus(id, 'SUCCEEDED', 240_000);
      expect(done.nodes.map((node) => node.phase)).toEqual(['DONE', 'DONE', 'DONE']);
      expect(done.reasonCode).toBe('rollout.succeeded');
      await expect.poll(() => [...watch.states.values()].every((state) => state.ready && !state.unschedulable), { timeout: 20_000 }).toBe(true);
      // The watch saw each node taken out, and never two at once.
      expect(watch.maxUnavailable).toBe(1);
      // The page followed it live, without a reload.
      await card.getByTestId('rollout-status').getByText('Done').waitFor({ timeout: 10_000 });
      for (const host of world.lab.hosts) {
        expect(await card.locator(`li[data-node="${host.hostname}"]`).getAttribute('data-phase')).toBe('DONE');
      }
      await screenshot(page, 'tmp/rollouts-e2e', 'rollout-done');
      // A subscriber heard every node go forward through its phases (each message is the rollout as read when sent) to the end.
      const heard = await live.until((messages) => messages.some((message) => message.rolloutChanged.status === 'SUCCEEDED'), 10_000);
      const order = ['PENDING', 'DRAIN', 'REBOOT', 'WAIT_READY', 'UNCORDON', 'DONE'];
      for (const node of done.nodes) {
        const seen = heard.map((message) => order.indexOf(message.rolloutChanged.nodes.find((each) => each.nodeId === node.nodeId)?.phase ?? ''));
        expect(seen).toEqual([...seen].sort((a, b) => a - b));
        expect(seen.at(-1)).toBe(order.indexOf('DONE'));
        expect(seen.some((phase) => phase > 0 && phase < order.indexOf('DONE'))).toBe(true);
      }
    } finally {
      watch.stop();
      await live.close();
    }
    const after = await Promise.all([0, 1, 2].map(bootId));
    after.forEach((id, index) => expect(id).not.toBe(before[index]));
    expect(await Promise.all([0, 1, 2].map(rebootRequests))).toEqual([1, 1, 1]);
    // Each host's recorded files were hashed again once it was back (never inspected since its install before).
    for (const nodeId of nodeIds) {
      await expect.poll(async () => (await world.gql<{ hostManifest: { state: string; inspectedAt: string | null } | null }>('query($n: ID!) { hostManifest(nodeId: $n) { state inspectedAt } }', { n: nodeId })).data?.hostManifest, { timeout: 20_000 })
        .toMatchObject({ state: 'CURRENT', inspectedAt: expect.any(String) });
    }
  });

  it('pauses on a PodDisruptionBudget that allows no disruption, naming it, and a cancel uncordons the node', async () => {
    const name = world.lab.hosts[0]?.hostname ?? '';
    const manifest = [
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}',
      `apiVersion: v1\nkind: Pod\nmetadata: {name: db-0, namespace: shop, labels: {app: db}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: db, uid: d1f0c7e2-0000-4000-8000-0000000000db, controller: true}]}\nspec: {nodeName: ${name}, containers: [{name: c, image: db}]}\n`,
      'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db-budget, namespace: shop}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}}',
    ].join('\n---\n');
    const file = join(tmpdir(), `rollouts-${world.lab.id}-pdb.yaml`);
    await writeFile(file, manifest);
    await kubectl('apply', '-f', file);
    // Running and Ready, as its kubelet would report it (a Pending pod is evicted past any budget).
    await kubectl('patch', 'pod', 'db-0', '-n', 'shop', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }));
    await expect.poll(async () => (await kubectl('get', 'pdb', 'db-budget', '-n', 'shop', '-o', 'jsonpath={.status.currentHealthy}/{.status.disruptionsAllowed}')).stdout, { timeout: 10_000 }).toBe('1/0');

    // A dry run says so first, and starts nothing.
    const dryRun = await cli(['rollout', 'start', '--kind', 'REBOOT', '--nodes', name, '--dry-run']);
    expect(dryRun.code).toBe(1);
    expect(dryRun.stdout).toContain('Dry run: 1 node(s) in this order, at most 1 out of service at once; nothing started.');
    expect(dryRun.stdout).toContain(`${name}: drain evicts 1 pod(s)`);
    expect(dryRun.stdout).toContain('PodDisruptionBudget shop/db-budget allows 0 disruption(s) now (shop/db-0): the rollout would pause here');
    expect((await world.gql<{ rollouts: Rollout[] }>(`query($c: ID!) { rollouts(clusterId: $c) { ${ROLLOUT} } }`, { c: world.clusterId })).data?.rollouts.map((each) => each.status)).toEqual(['SUCCEEDED']);

    const started = await start({ nodeIds: [nodeIds[0]], maxUnavailable: 1 });
    expect(started.errors).toBeUndefined();
    const id = started.data?.startRollout.id ?? '';
    const paused = await untilStatus(id, 'PAUSED', 60_000);
    expect(paused.reasonCode).toBe('rollout.pausedOnBudget');
    expect(paused.reason).toContain('shop/db-budget');
    expect(paused.reason).toContain('shop/db-0');
    expect(paused.nodes[0]).toMatchObject({ phase: 'DRAIN', problemCode: 'rollout.problem.budget', rebootedAt: null });
    // Counted as paused, by the service, on the cluster's metrics.
    const metrics = await (await fetch(`${world.api.url}/metrics`)).text();
    expect(sampleValue(metrics, 'ccos_rollouts', { cluster: 'lab', status: 'PAUSED' })).toBe(1);
    expect(sampleValue(metrics, 'ccos_rollout_transitions_total', { cluster: 'lab', kind: 'REBOOT', status: 'PAUSED_BY_SERVICE' })).toBe(1);
    // Held cordoned while paused, and not rebooted.
    expect((await kubectl('get', 'node', name, '-o', 'jsonpath={.spec.unschedulable}')).stdout).toBe('true');
    expect(await rebootRequests(0)).toBe(1);

    const status = await cli(['rollout', 'status']);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`Rollout ${id}: REBOOT PAUSED`);
    expect(status.stdout).toMatch(new RegExp(`${name}  DRAIN .*shop/db-budget`));
    const chinese = await cli(['rollout', 'status', id], 'zh_CN.UTF-8');
    expect(chinese.stdout).toContain('PodDisruptionBudget shop/db-budget（Pod shop/db-0）');
    // The cluster page says the same in Chinese, live: paused, why, and what can be done.
    await page.evaluate("localStorage.setItem('ccos.language', 'zh')");
    try {
      await page.goto(`${world.api.url}/clusters/${world.clusterId}`);
      const card = page.getByTestId('rollout');
      await card.getByRole('heading', { name: '滚动操作' }).waitFor();
      await card.getByTestId('rollout-status').getByText('已暂停').waitFor();
      expect(await card.getByTestId('rollout-reason').textContent()).toContain(`已暂停：${name} 的排空被 PodDisruptionBudget shop/db-budget（Pod shop/db-0）阻止`);
      await card.getByRole('button', { name: '恢复' }).waitFor();
      await screenshot(page, 'tmp/rollouts-e2e', 'rollout-paused-zh');
      const data = ['lab', id, ...world.lab.hosts.map((host) => host.hostname), 'shop/db-budget', 'shop/db-0', 'PodDisruptionBudget'];
      expect(await latinWordsOnScreen(page, data, '[data-testid="rollout"]')).toEqual([]);
    } finally {
      await page.evaluate("localStorage.setItem('ccos.language', 'en')");
    }
    const cancelled = await cli(['rollout', 'cancel']);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`Rollout ${id}: REBOOT CANCELLED`);
    await expect.poll(async () => (await rollout(id))?.nodes[0]?.phase, { timeout: 30_000 }).toBe('SKIPPED');
    expect((await kubectl('get', 'node', name, '-o', 'jsonpath={.spec.unschedulable}')).stdout).not.toBe('true');
    await kubectl('delete', 'pdb', 'db-budget', '-n', 'shop');
    await kubectl('delete', 'pod', 'db-0', '-n', 'shop', '--grace-period=0', '--force');
  });

  it('refuses a window with a bad cron expression or time zone, naming the field, and starts nothing', async () => {
    const badCron = await start({ window: { cron: 'every night', durationMinutes: 60, timeZone: 'UTC' } });
    expect(badCron.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(badCron.errors?.[0]?.extensions?.['field']).toBe('input.window.cron');
    const badZone = await start({ window: { cron: '0 2 * * *', durationMinutes: 60, timeZone: 'Mars/Olympus' } });
    expect(badZone.errors?.[0]?.extensions?.['field']).toBe('input.window.timeZone');
    const rollouts = await world.gql<{ rollouts: Rollout[] }>(`query($c: ID!) { rollouts(clusterId: $c) { ${ROLLOUT} } }`, { c: world.clusterId });
    expect(rollouts.data?.rollouts.map((each) => each.status)).toEqual(['CANCELLED', 'SUCCEEDED']);
  });

  it('pauses before starting a node while a named alert fires in Alertmanager, naming it, and goes on once it is resolved', async () => {
    await alertmanager.fire('NodeFilesystemAlmostFull');
    await alertmanager.fire('SomethingElse');
    const started = await cli(['rollout', 'start', '--kind', 'REBOOT', '--nodes', world.lab.hosts[1]?.hostname ?? '', '--pause-on-alert', 'NodeFilesystemAlmostFull,KubeletDown']);
    expect(started.code).toBe(0);
    const id = /^Rollout (\S+): REBOOT RUNNING/.exec(started.stdout)?.[1] ?? '';
    const paused = await untilStatus(id, 'PAUSED', 30_000);
    expect(paused.reasonCode).toBe('rollout.pausedOnAlert');
    expect(paused.reason).toBe('paused: alert NodeFilesystemAlmostFull is firing (Alertmanager); resume once it is resolved, or cancel');
    expect(paused.nodes.map((node) => node.phase)).toEqual(['PENDING']);
    const status = await cli(['rollout', 'status', id], 'zh_CN.UTF-8');
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('已暂停：告警 NodeFilesystemAlmostFull 正在触发（Alertmanager）');

    await alertmanager.resolve('NodeFilesystemAlmostFull');
    expect((await cli(['rollout', 'resume', id])).code).toBe(0);
    const done = await untilStatus(id, 'SUCCEEDED', 120_000);
    expect(done.nodes.map((node) => node.phase)).toEqual(['DONE']);
  });

  it('goes on where it was after the API is killed mid-rollout, rebooting no host twice', async () => {
    const before = await Promise.all([0, 1, 2].map(rebootRequests));
    const started = await cli(['rollout', 'start', '--kind', 'REBOOT', '--max-unavailable', '1', '--nodes', world.lab.hosts.map((host) => host.hostname).join(',')]);
    expect(started.code).toBe(0);
    const id = /^Rollout (\S+): REBOOT RUNNING, at most 1 unavailable at once/.exec(started.stdout)?.[1] ?? '';
    // Killed once the first host was asked to reboot.
    await expect.poll(async () => (await rollout(id))?.nodes[0]?.rebootedAt ?? null, { timeout: 60_000, interval: 200 }).not.toBeNull();
    await world.api.kill(true);
    await world.api.restart();
    const done = await untilStatus(id, 'SUCCEEDED', 240_000);
    expect(done.nodes.map((node) => node.phase)).toEqual(['DONE', 'DONE', 'DONE']);
    const after = await Promise.all([0, 1, 2].map(rebootRequests));
    expect(after.map((count, index) => count - (before[index] ?? 0))).toEqual([1, 1, 1]);
    const status = await cli(['rollout', 'status', id]);
    expect(status.code).toBe(0);
    expect(status.stdout.split('\n').filter((line) => line.endsWith('  DONE'))).toHaveLength(3);
  });

  it('restores a unit edited by hand with a REAPPLY started from the cluster page: the agent re-runs only the steps from the one that wrote it, no reboot, and the flag clears', async () => {
    const unit = '/etc/systemd/system/ccos-node-init.service';
    const recorded = (await hostManifest(nodeIds[1] ?? ''))?.files.find((file) => file.path === unit);
    const wrote = recorded?.step ?? 'no step recorded the unit';
    const [reboots, boot] = [await rebootRequests(1), await bootId(1)];
    await world.lab.exec(world.lab.hosts[1]?.id ?? '', ['sh', '-c', `echo '# edited by hand' >> ${unit}`]);
    // Found by the periodic inspection within its interval (the API started again to inspect every 5 s), naming the file.
    await world.api.restart({ HOST_INSPECTION_INTERVAL_SECONDS: '5' });
    await expect.poll(async () => (await hostManifest(nodeIds[1] ?? ''))?.state, { timeout: 20_000 }).toBe('DRIFTED');
    expect(await hostManifest(nodeIds[1] ?? '')).toMatchObject({ state: 'DRIFTED', drift: [{ path: unit, expected: recorded?.sha256, found: await onHost(1, unit) }] });

    await page.goto(`${world.api.url}/clusters/${world.clusterId}`);
    const card = page.getByTestId('rollout');
    const form = card.getByRole('form', { name: 'Start a rollout' });
    await form.getByRole('radio', { name: 'Restore drifted files' }).check();
    await form.getByRole('button', { name: 'Preview' }).click();
    // Only the drifted node is taken.
    const preview = form.getByTestId('rollout-preview');
    await preview.getByText('1 node in this order, at most 1 out of service at once.').waitFor();
    expect(await preview.locator('li[data-node]').evaluateAll((items) => items.map((item) => item.getAttribute('data-node')))).toEqual([world.lab.hosts[1]?.hostname]);
    await form.getByRole('button', { name: 'Restore files' }).click();
    await page.getByText('Rollout started.').first().waitFor();
    const id = (await world.gql<{ rollouts: Rollout[] }>(`query($c: ID!) { rollouts(clusterId: $c) { ${ROLLOUT} } }`, { c: world.clusterId })).data?.rollouts[0]?.id ?? '';
    const done = await untilStatus(id, 'SUCCEEDED', 240_000);
    expect(done.nodes).toMatchObject([{ nodeName: world.lab.hosts[1]?.hostname, phase: 'DONE', rebootedAt: null }]);
    await card.getByTestId('rollout-status').getByText('Done').waitFor({ timeout: 10_000 });
    await card.getByTestId('rollout-agent-run').waitFor();
    await screenshot(page, 'tmp/rollouts-e2e', 'reapply-done');

    // The file is as recorded again, and the node's inspection after its rollout says so.
    expect(await onHost(1, unit)).toBe(recorded?.sha256);
    await expect.poll(async () => (await hostManifest(nodeIds[1] ?? ''))?.state, { timeout: 20_000 }).toBe('CURRENT');
    // The agent's apply run: only the step that wrote the file, then kubelet restarted; the node stayed JOINED; no reboot.
    const node = await runsOf(nodeIds[1] ?? '');
    expect(node?.status).toBe('JOINED');
    const applied = node?.installRuns.find((run) => run.id === done.nodes[0]?.applyRunId);
    expect(applied).toMatchObject({ purpose: 'APPLY', status: 'SUCCEEDED', startStep: wrote });
    // From the step that wrote the unit on (a later one may write over what it writes), never the binaries, the packages or the preflight.
    expect(applied?.onlySteps?.at(-1)).toBe('START_KUBELET');
    expect(applied?.onlySteps?.filter((step) => ['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES'].includes(step))).toEqual([]);
    expect(applied?.steps.filter((step) => step.status !== 'PENDING').map((step) => step.step)).toEqual(applied?.onlySteps);
    expect(await rebootRequests(1)).toBe(reboots);
    expect(await bootId(1)).toBe(boot);
    // Nothing else needed it: a second REAPPLY is refused, saying why.
    const again = await start({ kind: 'REAPPLY' });
    expect(again.errors?.[0]?.extensions?.['code']).toBe('FAILED_PRECONDITION');
    expect(again.errors?.[0]?.message).toContain('no node of the selection has drifted files');
  }, 300_000);

  it('brings every node to a new artifact set with an UPGRADE, one at a time as a kubectl watch sees it, and every recorded hash matches the host', async () => {
    // The cluster's release as the operator would import it: the lab's set, with a new kubelet.
    const work = await mkdtemp(join(tmpdir(), 'rollouts-upgrade-'));
    try {
      const release = join(work, 'release');
      const version = (await world.gql<{ clusterArtifactSet: { version: string } }>('query($c: ID!) { clusterArtifactSet(clusterId: $c) { version } }', { c: world.clusterId })).data?.clusterArtifactSet.version ?? '';
      expect(version).not.toBe('');
      await cp(world.lab.artifactsDir, release, { recursive: true, filter: (source) => source !== join(world.lab.artifactsDir, 'sets') });
      await appendFile(join(release, 'binary', 'kubelet'), '// rebuilt\n');
      const kubelet = createHash('sha256').update(await readFile(join(release, 'binary', 'kubelet'))).digest('hex');
      const manifest = JSON.parse(await readFile(join(release, 'manifest.json'), 'utf8')) as { artifacts: Array<{ kind: string; name: string; sha256: string; size: number }> };
      const artifacts = manifest.artifacts.map((artifact) => (artifact.kind === 'binary' && artifact.name === 'kubelet' ? { ...artifact, sha256: kubelet, size: artifact.size + '// rebuilt\n'.length } : artifact));
      await writeFile(join(release, 'manifest.json'), JSON.stringify({ ...manifest, version, artifacts }));
      const archive = join(work, 'release.tar');
      await run('tar', ['-cf', archive, '-C', release, 'manifest.json', 'binary', 'rpm', 'unit']);
      const uploaded = await fetch(`${world.api.url}/admin/artifact-sets`, { method: 'POST', headers: { 'content-type': 'application/x-tar', authorization: `Bearer ${world.token}` }, body: await readFile(archive) });
      expect(uploaded.status).toBe(201);
      for (const nodeId of nodeIds) {
        await expect.poll(async () => (await hostManifest(nodeId))?.onClusterSet, { timeout: 20_000 }).toBe(false);
        expect((await hostManifest(nodeId))?.state).toBe('OUTDATED');
      }

      const watch = new NodeWatch(adminKubeconfig);
      try {
        await expect.poll(() => watch.states.size, { timeout: 20_000 }).toBe(3);
        const started = await cli(['rollout', 'start', '--kind', 'UPGRADE', '--max-unavailable', '1']);
        expect(started.code, `${started.stdout}${started.stderr}`).toBe(0);
        const id = /^Rollout (\S+): UPGRADE RUNNING, at most 1 unavailable at once/.exec(started.stdout)?.[1] ?? '';
        const done = await untilStatus(id, 'SUCCEEDED', 420_000);
        expect(done.nodes.map((node) => node.phase)).toEqual(['DONE', 'DONE', 'DONE']);
        await expect.poll(() => [...watch.states.values()].every((state) => state.ready && !state.unschedulable), { timeout: 20_000 }).toBe(true);
        expect(watch.maxUnavailable).toBe(1);
        const status = await cli(['rollout', 'status', id]);
        expect(status.stdout).toMatch(/\(agent run [0-9a-f-]{36}\)/);
      } finally {
        watch.stop();
      }
      for (const [index, nodeId] of nodeIds.entries()) {
        await expect.poll(async () => (await hostManifest(nodeId))?.state, { timeout: 30_000 }).toBe('CURRENT');
        const upgraded = await hostManifest(nodeId);
        expect(upgraded).toMatchObject({ onClusterSet: true, artifactSetVersion: version, drift: [] });
        expect(upgraded?.files.find((file) => file.path === '/usr/local/bin/kubelet')?.sha256).toBe(kubelet);
        for (const file of upgraded?.files ?? []) {
          expect(await onHost(index, file.path), file.path).toBe(file.sha256);
        }
        const latest = (await runsOf(nodeId))?.installRuns.find((each) => each.purpose === 'APPLY' && each.onlySteps?.includes('DOWNLOAD_BINARIES'));
        expect(latest).toMatchObject({ status: 'SUCCEEDED', onlySteps: ['DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET'] });
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }, 600_000);
});
