import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type Lab, type LabHost, startLab } from '@ccos/tools/lab';
import { freePort, graphqlFrom } from '../support/api-process';
import { latinWordsOnScreen } from '../support/chinese-text';
import { RECORD_BATCH_STATUS_ROWS, batchPageLags, launchChromium, openConsolePage, screenshot } from '../support/console-browser';
import { nodeStatusChanges } from '../support/graphql-subscriptions';
import { kubectl } from '../support/kubectl-drain';

/**
 * The operator's day one, walked as a newcomer would, once in English and once in Chinese, in
 * Chromium against `npm start` itself (run on a pseudo-terminal, as in a terminal: no question
 * may stop it; the admin password is the one it prints): register a cluster that lacks the
 * bootstrap identities' namespace → the cluster page names the failed check and its fix, and
 * Install waits → add a batch of three hosts (the batch page follows each within 2 s of the API)
 * → apply the printed fix with kubectl → the check passes → install the batch → all join →
 * remove one → add the same host again: its verdict and the offered actions agree (a fresh OS
 * is needed) → reinstall it in the lab → delete the old record, add it again → install → it joins.
 * On the Chinese walk every screen is checked for English outside data and technical names.
 * Each stage's time is printed (and written to tmp/day-one-walk.txt).
 * Needs the builds `npm start` makes (Nx's cache makes them instant after `npm test`'s build stage).
 */
const SCREENSHOTS = 'tmp/console-day-one-e2e';
const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';
const ALL_CHECKS = 4;

/** The shipped RBAC without the bootstrap namespace and what lives in it: what a cluster admin forgot to apply. */
const WITHOUT_BOOTSTRAP_NAMESPACE = parseAllDocuments(SHIPPED_RBAC)
  .map((document) => document.toJS() as { kind: string; metadata: { name: string; namespace?: string } })
  .filter((object) => object.metadata.namespace !== BOOTSTRAP_NAMESPACE && !(object.kind === 'Namespace' && object.metadata.name === BOOTSTRAP_NAMESPACE))
  .map((object) => stringify(object))
  .join('---\n');

/** What the walk reads and clicks, in each language. */
const WORDS = {
  en: {
    signIn: 'Sign in', userName: 'User name', password: /^Password/, clusters: 'Clusters', register: 'Register cluster', name: 'Name', apiServerUrl: 'API server URL',
    vip: 'Master VIP', bootstrapStyle: 'Bootstrap style', kubeadm: 'kubeadm (bootstrap tokens)', machineConfigCa: 'Machine config server CA (PEM, optional)',
    autoApprove: 'Approve node certificates automatically', notReady: 'Not ready: installs would fail', ready: /^\s*Ready\s*$/, checkAgain: 'Check again',
    nodes: 'Nodes', addMany: 'Add many', hostList: 'Hosts', sharedPassword: /^Password \(for every host\)/, addAll: 'Add all rows', batchOf3: 'Batch of 3 hosts',
    installBatch: 'Install batch', notReadyNote: 'The cluster is not ready for installs (BOOTSTRAP_NAMESPACE', removeNode: 'Remove node', removeHeading: (host: string) => `Remove ${host}`,
    confirmName: 'Type the node name to confirm', addNode: 'Add node', hostname: 'Host name', ip: 'IP address', sshUser: 'SSH user', sshPort: 'SSH port',
    wasANode: (host: string) => `${host} was a node of this cluster`, acknowledge: /That machine has been wiped or is gone/, reinstallOs: 'reinstall its operating system',
    deleteRecord: 'Delete record', deleteDialog: (host: string) => `Delete the record of ${host}?`, install: 'Install', installDialog: (host: string) => `Install ${host}?`,
    readyToInstall: 'Ready to install',
  },
  zh: {
    signIn: '登录', userName: '用户名', password: /^密码/, clusters: '集群', register: '注册集群', name: '名称', apiServerUrl: 'API 服务器地址',
    vip: 'Master VIP', bootstrapStyle: '引导方式', kubeadm: 'kubeadm（引导令牌）', machineConfigCa: 'machine config server 的 CA 证书（PEM，可选）',
    autoApprove: '自动批准节点证书', notReady: '尚不能安装：安装将会失败', ready: /^\s*可以安装\s*$/, checkAgain: '重新检查',
    nodes: '节点', addMany: '批量录入', hostList: '主机', sharedPassword: /^密码（所有主机共用）/, addAll: '录入全部行', batchOf3: '3 台主机的批次',
    installBatch: '安装批次', notReadyNote: '集群尚未具备安装条件（检查项 BOOTSTRAP_NAMESPACE', removeNode: '移除节点', removeHeading: (host: string) => `移除 ${host}`,
    confirmName: '输入节点名以确认', addNode: '录入节点', hostname: '主机名', ip: 'IP 地址', sshUser: 'SSH 用户', sshPort: 'SSH 端口',
    wasANode: (host: string) => `${host} 曾是此集群的节点`, acknowledge: /那台机器已被清除或不复存在/, reinstallOs: '请重装其操作系统',
    deleteRecord: '删除记录', deleteDialog: (host: string) => `删除 ${host} 的记录？`, install: '安装节点', installDialog: (host: string) => `安装 ${host}？`,
    readyToInstall: '待安装',
  },
} as const;
type Language = keyof typeof WORDS;

interface Walker {
  readonly language: Language;
  readonly sim: KubeSim;
  readonly lab: Lab;
}

/** `npm start` on a pseudo-terminal, as a newcomer runs it: no CI variables, a terminal, its input open. */
interface Service {
  readonly url: string;
  readonly process: ChildProcess;
  output(): string;
  readonly adminPassword: string;
  /** From the start to /readyz answering, in seconds. */
  readonly startSeconds: number;
}

const timings: string[] = [];
const walkers = new Map<Language, Walker>();
let browser: Browser;
let service: Service;
let dataDir = '';

describe('day one: a newcomer walks from npm start to nodes joined, removed and back, in English and in Chinese', () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ccos-day-one-'));
    const chromium = launchChromium();
    try {
      // One after the other: each lab takes its own slice of the network under the machine-wide lock.
      for (const language of ['en', 'zh'] as const) {
        const sim = await startKubeSim({ seed: WITHOUT_BOOTSTRAP_NAMESPACE });
        const lab = await startLab({
          hosts: 3,
          name: `day-one ${language}`,
          hostnamePrefix: `${language}-`,
          kubeconfig: sim.kubeconfig,
          kubelet: { csrTimeoutSeconds: 600, heartbeatSeconds: 5, readyDelaySeconds: 1 },
        }).catch(async (error: unknown) => {
          await sim.stop();
          throw error;
        });
        walkers.set(language, { language, sim, lab });
      }
    } finally {
      browser = await chromium;
    }
    service = await startService(dataDir, (walkers.get('en') as Walker).lab.artifactsDir);
    timings.push(`npm start to a ready service (builds cached): ${service.startSeconds.toFixed(1)} s`);
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    if (service) {
      await stopService(service);
    }
    for (const walker of walkers.values()) {
      await walker.lab.stop().catch(() => undefined);
      await walker.sim.stop().catch(() => undefined);
    }
    await rm(dataDir, { recursive: true, force: true });
    await mkdir('tmp', { recursive: true });
    await writeFile('tmp/day-one-walk.txt', `${timings.join('\n')}\n`);
    console.log(`day one walk timings:\n  ${timings.join('\n  ')}`);
  });

  it('npm start asks nothing on a terminal and prints the admin password once', () => {
    expect(service.output()).not.toMatch(/usage data|\?\s*›|\(Y\/n\)/i);
    expect(service.adminPassword.length).toBeGreaterThanOrEqual(16);
  });

  it('walks day one in English', async () => {
    await walk(walkers.get('en') as Walker);
  }, 900_000);

  it('walks day one in Chinese, with no English outside data and technical names', async () => {
    await walk(walkers.get('zh') as Walker);
  }, 900_000);
});

async function startService(folder: string, artifactsDir: string): Promise<Service> {
  const port = await freePort('0.0.0.0');
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(CI|CONTINUOUS_INTEGRATION|BUILD_NUMBER|RUN_ID|GITHUB_ACTIONS|GITLAB_CI|NX_.*|VITEST.*|NODE_ENV|TEST)$/.test(name)));
  const began = Date.now();
  const child = spawn('script', ['-qec', 'npm start', '/dev/null'], {
    env: {
      ...inherited,
      TERM: 'xterm',
      PORT: String(port),
      DATA_DIR: join(folder, 'data'),
      // The lab's stand-in release, and its small hosts; kube-sim listens on loopback, which a cluster address may not be by default.
      ARTIFACTS_DIR: artifactsDir,
      MIN_MEMORY_MB: '256',
      MIN_CPUS: '1',
      ALLOW_CLUSTER_ADDRESSES: 'loopback',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`npm start exited with ${child.exitCode}:\n${output.slice(-3000)}`);
    }
    if (Date.now() - began > 600_000) {
      throw new Error(`npm start was not ready after 600 s:\n${output.slice(-3000)}`);
    }
    const ready = await fetch(`${url}/readyz`).then((response) => response.ok, () => false);
    if (ready) {
      break;
    }
    await new Promise((wake) => setTimeout(wake, 250));
  }
  const printed = /created user "admin" with password\s+(\S+)/.exec(output);
  if (!printed?.[1]) {
    throw new Error(`npm start printed no admin password:\n${output.slice(-3000)}`);
  }
  return { url, process: child, output: () => output, adminPassword: printed[1], startSeconds: (Date.now() - began) / 1000 };
}

/** Ctrl+C, as on the terminal: the start script passes it on to the service. */
async function stopService(running: Service): Promise<void> {
  const exited = new Promise((resolve) => running.process.once('exit', resolve));
  if (running.process.exitCode === null && running.process.pid) {
    process.kill(-running.process.pid, 'SIGINT');
    const timer = setTimeout(() => running.process.pid && process.kill(-running.process.pid, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

async function walk({ language, sim, lab }: Walker): Promise<void> {
  const words = WORDS[language];
  const clusterName = `walk-${language}`;
  const [first, ...others] = lab.hosts as [LabHost, LabHost, LabHost];
  const secrets = [first.password, service.adminPassword];
  const leaked: string[] = [];
  const { page, record } = await openConsolePage(browser, (request, response) => {
    // The service never sends a password back to the page.
    if (secrets.some((secret) => response.includes(secret))) {
      leaked.push(request.slice(0, 200));
    }
  });
  const english: Record<string, string[]> = {};
  /** On the Chinese walk: any Latin word outside data and technical names is English left on the screen. */
  const token = await login(service.url, service.adminPassword);
  let clusterId = '';
  /** What the hosts say about themselves (their OS release, kernel), shown as data. */
  const hostFacts = async () => {
    const answer = await gql<{ nodes: Array<{ facts: Record<string, unknown> }> }>(token, 'query($c: ID!) { nodes(clusterId: $c) { facts { osRelease kernel arch } } }', { c: clusterId });
    return (answer.nodes ?? []).flatMap((node) => Object.values(node.facts).filter((value): value is string => typeof value === 'string'));
  };
  const screen = async (name: string, data: readonly string[] = []) => {
    await screenshot(page, SCREENSHOTS, `${name}-${language}`);
    if (language === 'zh') {
      expect(await page.evaluate('document.documentElement.lang')).toBe('zh-CN');
      const facts = clusterId ? await hostFacts() : [];
      const words = await latinWordsOnScreen(page, [clusterName, 'admin', sim.url, lab.vip, ...lab.hosts.flatMap((host) => [host.hostname, host.ip, host.user]), ...facts, ...data]);
      if (words.length > 0) {
        english[name] = words;
      }
    }
  };
  let stageStart = Date.now();
  const stage = (what: string) => {
    const now = Date.now();
    timings.push(`${language}: ${what}: ${((now - stageStart) / 1000).toFixed(1)} s`);
    stageStart = now;
  };
  const walkStart = Date.now();
  const status = page.getByTestId('node-status');
  /** The add-node form for the first host; the API says the name was a node, so the ADMIN confirms its old machine is gone and sends again. */
  const addFirstAgain = async (clusterId: string, shot: string) => {
    await page.goto(`${service.url}/clusters/${clusterId}/nodes/new`);
    await page.getByRole('heading', { name: words.addNode, level: 1 }).waitFor();
    await page.getByRole('textbox', { name: words.hostname }).fill(first.hostname);
    await page.getByRole('textbox', { name: words.ip }).fill(first.ip);
    await page.getByRole('textbox', { name: words.sshUser }).fill(first.user);
    await page.getByRole('textbox', { name: words.sshPort }).fill(String(first.port));
    await page.getByLabel(words.password).fill(first.password);
    await page.getByRole('button', { name: words.addNode }).click();
    const old = page.getByTestId('old-certificates');
    await old.getByRole('heading', { name: words.wasANode(first.hostname) }).waitFor();
    await screen(shot);
    await old.getByLabel(words.acknowledge).check();
    await page.getByLabel(words.password).fill(first.password);
    await page.getByRole('button', { name: words.addNode }).click();
    await page.getByRole('heading', { name: first.hostname, level: 1 }).waitFor();
  };

  try {
    // Sign in with the password npm start printed.
    await page.goto(`${service.url}/sign-in`);
    if (language === 'zh') {
      await page.getByRole('button', { name: '简体中文' }).click();
    }
    await page.getByRole('heading', { name: words.signIn, level: 1 }).waitFor();
    await screen('sign-in');
    await page.getByRole('textbox', { name: words.userName }).fill('admin');
    await page.getByLabel(words.password).fill(service.adminPassword);
    await page.getByRole('button', { name: words.signIn }).click();
    await page.getByRole('heading', { name: words.clusters, level: 1 }).waitFor();

    // Register the cluster; the cluster page says it is not ready, which check fails and the fix.
    await page.getByRole('link', { name: words.register }).first().click();
    await page.getByRole('heading', { name: words.register, level: 1 }).waitFor();
    await page.getByRole('textbox', { name: words.name, exact: true }).fill(clusterName);
    await page.getByRole('textbox', { name: words.apiServerUrl }).fill(sim.url);
    await page.getByRole('textbox', { name: words.vip }).fill(lab.vip);
    await page.getByRole('textbox', { name: 'kubeconfig', exact: true }).fill(shippedIdentityKubeconfig(sim));
    await page.getByLabel(words.bootstrapStyle).selectOption({ label: words.kubeadm });
    await page.getByRole('textbox', { name: words.machineConfigCa }).fill(lab.machineConfigCaCert);
    await page.getByLabel(words.autoApprove).check();
    // The name hint's example is data.
    await screen('register-cluster', ['prod-east']);
    await page.getByRole('button', { name: words.register }).click();
    await page.getByRole('heading', { name: clusterName, level: 1 }).waitFor();
    const clusterUrl = page.url();
    clusterId = new URL(clusterUrl).pathname.split('/').pop() ?? '';
    const checks = page.getByTestId('cluster-checks');
    await checks.getByTestId('cluster-checks-state').filter({ hasText: words.notReady }).waitFor({ timeout: 30_000 });
    const namespaceCheck = checks.locator('[data-check="BOOTSTRAP_NAMESPACE"]');
    expect(await namespaceCheck.innerText()).toContain(BOOTSTRAP_NAMESPACE);
    const fix = await namespaceCheck.locator('pre').innerText();
    expect(fix).toContain(`kind: Namespace\nmetadata:\n  name: ${BOOTSTRAP_NAMESPACE}`);
    // What the failed checks name (the service's account, the permissions it lacks) is data.
    const checkParams = (await gql<{ clusterChecks: Array<{ reasonParams: Record<string, unknown> | null }> }>(token, 'query($c: ID!) { clusterChecks(clusterId: $c) { reasonParams } }', { c: clusterId })).clusterChecks
      .flatMap((check) => Object.values(check.reasonParams ?? {}))
      .flatMap((value) => (Array.isArray(value) ? value : [value]))
      .filter((value): value is string => typeof value === 'string');
    await screen('cluster-not-ready', checkParams);
    stage('sign in, register the cluster, see the failed check and its fix');

    // Add three hosts as a batch; the batch page follows each host's add-time check within 2 s of the API.
    await page.getByRole('main').getByRole('link', { name: words.nodes, exact: true }).click();
    await page.getByRole('main').getByRole('link', { name: words.addMany }).click();
    await page.getByRole('textbox', { name: words.hostList, exact: true }).fill(lab.hosts.map((host) => `${host.hostname} ${host.ip}`).join('\n'));
    await page.getByLabel(words.sharedPassword).fill(first.password);
    const changes = nodeStatusChanges(service.url, token, clusterId);
    const settled = changes.untilAllLeftAdding(lab.hosts.map((host) => host.hostname), 120_000);
    await page.evaluate(RECORD_BATCH_STATUS_ROWS);
    await page.getByRole('button', { name: words.addAll }).click();
    await page.getByRole('heading', { name: words.batchOf3, level: 1 }).waitFor();
    const batchUrl = page.url();
    await settled.finally(() => changes.close());
    const lags = await batchPageLags(page, changes.seen());
    expect(lags.length).toBeGreaterThan(0);
    for (const change of lags) {
      expect(change.lagMs, `${change.hostname} ${change.status} on the batch page after the API`).toBeLessThanOrEqual(2000);
    }
    await expect.poll(() => page.locator('[data-testid="host-status"][data-status="READY_TO_INSTALL"]').count(), { timeout: 60_000 }).toBe(3);
    timings.push(`${language}: batch page behind the API by at most ${Math.max(...lags.map((change) => change.lagMs))} ms (${lags.length} changes)`);

    // Install waits for the cluster: the batch page says why and links to the cluster page.
    const notReady = page.getByTestId('cluster-not-ready');
    await notReady.waitFor({ timeout: 30_000 });
    expect(await notReady.innerText()).toContain(words.notReadyNote);
    expect(await page.getByRole('button', { name: words.installBatch }).isDisabled()).toBe(true);
    await screen('batch-waits-for-cluster', ['BOOTSTRAP_NAMESPACE', 'SERVICE_PERMISSIONS']);
    stage('add a batch of 3, see Install wait for the cluster');

    // The cluster admin applies the printed fix with kubectl; checked again, the cluster is ready.
    const kubeHome = await mkdtemp(join(tmpdir(), 'ccos-day-one-kube-'));
    try {
      const env = { HOME: kubeHome, KUBECONFIG: join(kubeHome, 'admin.kubeconfig') };
      await writeFile(env.KUBECONFIG, sim.adminKubeconfig ?? sim.kubeconfig, { mode: 0o600 });
      const applied = await kubectl(env, ['apply', '-f', '-'], 60_000, fix);
      expect(applied.code, applied.stderr).toBe(0);
    } finally {
      await rm(kubeHome, { recursive: true, force: true });
    }
    await notReady.getByRole('link').click();
    await page.getByRole('heading', { name: clusterName, level: 1 }).waitFor();
    await checks.getByRole('button', { name: words.checkAgain }).click();
    await checks.getByTestId('cluster-checks-state').filter({ hasText: words.ready }).waitFor({ timeout: 30_000 });
    expect(await checks.locator('[data-check]').count()).toBe(ALL_CHECKS);
    expect(await checks.locator('[data-check] pre').count()).toBe(0);
    await screen('cluster-ready', [BOOTSTRAP_NAMESPACE]);
    stage('apply the fix with kubectl, check again: ready');

    // Install the batch: every host joins (the cluster's auto-approver approves their CSRs).
    await page.goto(batchUrl);
    const install = page.getByRole('button', { name: words.installBatch });
    await expect.poll(() => install.isEnabled(), { timeout: 30_000 }).toBe(true);
    await install.click();
    const batchState = page.getByTestId('batch-state');
    await expect
      .poll(async () => {
        const state = await batchState.getAttribute('data-state');
        if (state === 'NEEDS_ATTENTION') {
          throw new Error(`the batch needs attention: ${await page.getByTestId('batch-failures').textContent().catch(() => '')}`);
        }
        return state;
      }, { timeout: 300_000, interval: 500 })
      .toBe('FINISHED');
    expect(await page.locator('tr[data-phase="JOINED"]').count()).toBe(3);
    await screen('batch-joined');
    stage('install the batch: 3 joined');

    // Remove one, after the preview, with its name typed.
    await page.locator(`tr[data-host="${first.hostname}"]`).getByRole('link', { name: first.hostname }).click();
    await page.getByRole('heading', { name: first.hostname, level: 1 }).waitFor();
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 30_000 }).toBe('JOINED');
    await screen('node-joined');
    await page.getByRole('main').getByRole('link', { name: words.removeNode }).click();
    await page.getByRole('heading', { name: words.removeHeading(first.hostname), level: 1 }).waitFor();
    await page.getByRole('textbox', { name: words.confirmName }).fill(first.hostname);
    const submit = page.getByRole('button', { name: words.removeNode });
    await expect.poll(() => submit.isEnabled(), { timeout: 30_000 }).toBe(true);
    await screen('remove-node', [`oc adm drain ${first.hostname} --ignore-daemonsets --timeout=3600s`]);
    await submit.click();
    await page.getByRole('heading', { name: first.hostname, level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('removal-status').getAttribute('data-status'), { timeout: 180_000 }).toBe('SUCCEEDED');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 30_000 }).toBe('REMOVED');
    expect(sim.store.list(sim.resource('nodes')).map((node) => node.metadata.name)).not.toContain(first.hostname);
    await screen('node-removed');
    stage(`remove ${first.hostname}`);

    // Added again as it is, the host is known for what it is: its machine was a node. The verdict,
    // the next step and the actions agree: nothing to install until its OS is reinstalled.
    const removedNodeUrl = page.url();
    await addFirstAgain(clusterId, 'readd-old-certificates');
    expect(page.url()).not.toBe(removedNodeUrl);
    const verdict = page.getByTestId('host-verdict');
    await expect.poll(() => verdict.getAttribute('data-verdict'), { timeout: 120_000 }).toBe('REINSTALL_REQUIRED');
    await expect.poll(() => page.getByRole('main').textContent(), { timeout: 30_000 }).toContain(words.reinstallOs);
    expect(await page.getByRole('button', { name: words.install, exact: true }).count()).toBe(0);
    await screen('readded-reinstall-required', ['machine-id', first.hostname]);
    stage(`add ${first.hostname} again: reinstall required, no Install`);

    // A fresh OS in the lab (a new machine-id and host keys); the old record goes, the host is added again and joins.
    await lab.faults.reinstall(first.id);
    await page.getByRole('button', { name: words.deleteRecord }).click();
    const deleteDialog = page.getByRole('dialog', { name: words.deleteDialog(first.hostname) });
    await deleteDialog.getByRole('button', { name: words.deleteRecord }).click();
    await deleteDialog.waitFor({ state: 'hidden' });
    await addFirstAgain(clusterId, 'readd-after-reinstall');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 120_000 }).toBe('READY_TO_INSTALL');
    expect(await verdict.count()).toBe(0);
    const installButton = page.getByRole('button', { name: words.install, exact: true });
    await expect.poll(() => installButton.isEnabled(), { timeout: 30_000 }).toBe(true);
    await screen('reinstalled-ready');
    stage(`reinstall ${first.hostname} in the lab, delete the record, add it again: ready to install`);
    await installButton.click();
    await page.getByRole('dialog', { name: words.installDialog(first.hostname) }).getByRole('button', { name: words.install }).click();
    await expect
      .poll(async () => {
        const now = await status.getAttribute('data-status');
        if (now === 'INSTALL_FAILED' || now === 'STALLED') {
          throw new Error(`${first.hostname} ${now}: ${await page.getByTestId('status-reason').textContent().catch(() => '')}`);
        }
        return now;
      }, { timeout: 300_000, interval: 500 })
      .toBe('JOINED');
    await screen('rejoined');
    stage(`install ${first.hostname} again: joined`);
    timings.push(`${language}: the whole walk: ${((Date.now() - walkStart) / 1000).toFixed(1)} s`);

    expect(others.every((host) => sim.store.get(sim.resource('nodes'), undefined, host.hostname))).toBe(true);
    expect(english).toEqual({});
    expect(leaked).toEqual([]);
    expect(record.pageErrors).toEqual([]);
  } catch (error) {
    const file = await screenshot(page, SCREENSHOTS, `failed-${language}`).catch(() => 'none');
    console.error(`day one (${language}) failed; screenshot: ${file}\nservice output tail:\n${service.output().slice(-4000)}`);
    throw error;
  } finally {
    await page.context().close();
  }
}

/** A GraphQL call as the given session (the walk's own reads: what the API published, the data its screens show). */
async function gql<T>(token: string, query: string, variables: Record<string, unknown>): Promise<T> {
  const answer = await graphqlFrom<T>(service.url, '127.0.0.1', query, variables, { authorization: `Bearer ${token}` });
  if (!answer.data || answer.errors) {
    throw new Error(`${query}: ${JSON.stringify(answer.errors)}`);
  }
  return answer.data;
}

async function login(url: string, password: string): Promise<string> {
  const answer = await graphqlFrom<{ login: { token: string } }>(url, '127.0.0.1', 'mutation($p: String!) { login(username: "admin", password: $p) { token } }', { p: password });
  const token = answer.data?.login.token;
  if (!token) {
    throw new Error(`login failed: ${JSON.stringify(answer.errors)}`);
  }
  return token;
}
