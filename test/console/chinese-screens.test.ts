import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { E2E_ADMIN_PASSWORD } from '../support/api-process';
import { latinWordsOnScreen } from '../support/chinese-text';
import { type PageRecord, screenshot } from '../support/console-browser';
import { useConsoleWorld } from '../support/console-world';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The console in Chinese from start to end, against the real world (kube-sim, a lab host, the
 * built API and agent, Chromium): sign in, add a host, an install that fails at PREFLIGHT (swap
 * on), a retry that fails at APPLY_IGNITION (the machine config server answers a load
 * balancer's HTML page), a retry that gets to the CSRs, the CSR decisions, the removal of the
 * node with workloads on it (a ReplicaSet's pod under a PodDisruptionBudget, a DaemonSet's pod,
 * an unmanaged pod). On every screen, every Latin word is either data (host names,
 * addresses, CSR, pod and workload names, output tails shown as code) or one of a few technical
 * names Chinese operators use as they are; anything else is English left on a Chinese screen,
 * and fails the test naming the text around it.
 * Screenshots (CJK fonts from fonts-noto-cjk) go to tmp/console-zh-e2e.
 * Needs `npx nx run-many -t build -p api console boot-worker`.
 */
const SCREENSHOTS = 'tmp/console-zh-e2e';

/** The names of the planted workloads that show without their namespace (pods show as namespace/name, which is data already). */
const WORKLOAD_NAMES = ['shop/web-budget', 'web-budget'];

/** The user kube-sim's objects are created as in this test: the cluster's admin. */
const CLUSTER_ADMIN = { username: 'cluster-admin', groups: ['system:masters', 'system:authenticated'] };

/** A CSR's key usages as Kubernetes names them (spec.usages), shown as the request asks for them. */
const KEY_USAGES = ['digital signature', 'key encipherment', 'client auth', 'server auth'];

let world: ScaleOutWorld;
let page: Page;
let record: PageRecord;
let baseUrl = '';
let nodeUrl = '';
/** The screens checked, and the English found on each (checked at the end, so one run names every leftover). */
const screens: string[] = [];
const english: Record<string, string[]> = {};
const hostFacts: string[] = [];

describe('console: every screen of a scale-out and a removal in Chinese', () => {
  const shared = useConsoleWorld({
    start: () => startScaleOutWorld({ hosts: 1, name: 'console-zh', apiEnv: { SSH_CONNECT_TIMEOUT_MS: '3000' } }),
    screenshots: SCREENSHOTS,
    startTimeoutMs: 900_000,
  });
  beforeAll(() => {
    ({ world, page, record, baseUrl } = shared);
  });

  it('switches to Chinese on the sign-in page and signs in', async () => {
    await page.goto(`${baseUrl}/sign-in`);
    await page.getByRole('button', { name: '简体中文' }).click();
    await page.getByRole('heading', { name: '登录', level: 1 }).waitFor();
    await expectChinese('sign-in');
    await page.getByRole('textbox', { name: '用户名' }).fill('admin');
    await page.getByLabel(/^密码/).fill(E2E_ADMIN_PASSWORD);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('heading', { name: '集群', level: 1 }).waitFor();
    await expectChinese('clusters');
    await page.getByRole('link', { name: 'lab', exact: true }).click();
    await page.getByRole('heading', { name: 'lab', level: 1 }).waitFor();
    await expectChinese('cluster');
  });

  it('adds the lab host through the form and shows it ready to install, in Chinese', async () => {
    const host = world.lab.hosts[0];
    // Swap on: the host is accepted, and its first install fails at PREFLIGHT.
    await world.lab.faults.setSwap(host.id, true);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('heading', { name: 'lab 的节点', level: 1 }).waitFor();
    await expectChinese('nodes-empty');
    await page.getByRole('main').getByRole('link', { name: '录入节点' }).first().click();
    await page.getByRole('heading', { name: '录入节点', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: '主机名' }).fill(host.hostname);
    await page.getByRole('textbox', { name: 'IP 地址' }).fill('198.18.0.300');
    await page.getByRole('textbox', { name: 'SSH 用户' }).fill(host.user);
    await page.getByRole('textbox', { name: 'SSH 端口' }).fill(String(host.port));
    await page.getByLabel(/^密码/).fill(host.password);
    await page.getByRole('button', { name: '录入节点' }).click();
    await expectChinese('add-node-invalid', [host.user]);
    await page.getByRole('textbox', { name: 'IP 地址' }).fill(host.ip);
    await page.getByRole('button', { name: '录入节点' }).click();
    await page.getByRole('heading', { name: host.hostname, level: 1 }).waitFor();
    nodeUrl = page.url();
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 90_000 }).toBe('READY_TO_INSTALL');
    // What the host said about itself is data too (its OS names itself in English).
    const nodeId = new URL(nodeUrl).pathname.split('/').at(-1);
    const facts = await world.gql<{ node: { facts: { osRelease: string | null; kernel: string | null; arch: string | null } } }>('query($id: ID!) { node(id: $id) { facts { osRelease kernel arch } } }', { id: nodeId });
    hostFacts.push(...Object.values(facts.data?.node.facts ?? {}).filter((value): value is string => typeof value === 'string'));
    await expectChinese('node-ready');
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('row').filter({ hasText: host.hostname }).waitFor();
    await expectChinese('nodes-one');
  });

  it("refuses the same host name again with the API's field error, in Chinese beside the field", async () => {
    const host = world.lab.hosts[0];
    await page.getByRole('main').getByRole('link', { name: '录入节点' }).first().click();
    await page.getByRole('heading', { name: '录入节点', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: '主机名' }).fill(host.hostname);
    await page.getByRole('textbox', { name: 'IP 地址' }).fill('198.18.0.250');
    await page.getByRole('textbox', { name: 'SSH 用户' }).fill(host.user);
    await page.getByRole('textbox', { name: 'SSH 端口' }).fill(String(host.port));
    await page.getByLabel(/^密码/).fill(host.password);
    await page.getByRole('button', { name: '录入节点' }).click();
    await page.getByText(`“${host.hostname}”已是此集群的节点（待安装）`, { exact: true }).waitFor();
    await expectChinese('add-node-taken', [host.user, '198.18.0.250']);
  });

  it('shows an install that fails at PREFLIGHT, with its reason, events and hints in Chinese', async () => {
    const host = world.lab.hosts[0];
    await page.goto(nodeUrl);
    await page.getByRole('button', { name: '安装节点', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `安装 ${host.hostname}？` });
    await dialog.waitFor();
    await expectChinese('install-dialog');
    await dialog.getByRole('button', { name: '安装节点' }).click();
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 90_000 }).toBe('INSTALL_FAILED');
    const reason = page.getByTestId('status-reason');
    await expect.poll(() => reason.textContent()).toContain('预检失败');
    expect(await reason.textContent()).toContain('swap 已开启');
    const preflight = page.locator('li[data-step="PREFLIGHT"]');
    expect(await preflight.textContent()).toContain('swapoff -a');
    await page.getByRole('button', { name: '下载诊断包' }).waitFor({ timeout: 20_000 });
    await expectChinese('node-install-failed');
  });

  it('retries into a failure at APPLY_IGNITION (a load balancer\'s HTML page at the machine config server), with its reason and hints in Chinese', async () => {
    const host = world.lab.hosts[0];
    await world.lab.faults.setSwap(host.id, false);
    await world.lab.faults.setMachineConfigServer({ mode: 'html' });
    await page.getByRole('button', { name: '重试安装' }).click();
    await page.getByRole('dialog', { name: `重试安装 ${host.hostname}？` }).getByRole('button', { name: '重试安装' }).click();
    const status = page.getByTestId('node-status');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('INSTALLING');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 240_000 }).toBe('INSTALL_FAILED');
    const ignition = page.locator('li[data-step="APPLY_IGNITION"]').first();
    await expect.poll(() => ignition.getAttribute('data-state'), { timeout: 30_000 }).toBe('failed');
    const reason = page.getByTestId('status-reason');
    await expect.poll(() => reason.textContent()).toContain('应用 Ignition 配置失败');
    expect(await reason.textContent()).toContain('返回的不是 Ignition 配置（内容类型为 text/html）');
    // The agent's own hint, by its code: the failure is the load balancer's, and the page says so in Chinese.
    expect(await ignition.textContent()).toContain('通常是负载均衡器的错误页面');
    await expectChinese('node-ignition-failed');
  });

  it('retries the install, and decides its CSRs on the certificate page in Chinese', async () => {
    const host = world.lab.hosts[0];
    await world.lab.faults.setMachineConfigServer({ mode: 'ok' });
    await page.getByRole('button', { name: '重试安装' }).click();
    await page.getByRole('dialog', { name: `重试安装 ${host.hostname}？` }).getByRole('button', { name: '重试安装' }).click();
    await expect.poll(() => page.locator('li[data-step="START_KUBELET"]').first().getAttribute('data-state'), { timeout: 180_000 }).toBe('running');
    await expect.poll(() => page.locator('li[data-step="START_KUBELET"]').first().textContent(), { timeout: 60_000 }).toContain('正在等待批准 CSR');
    // The status card and the node list say the install waits for an operator, with a way to the certificates.
    const waiting = page.getByTestId('status-reason');
    await expect.poll(() => waiting.textContent(), { timeout: 30_000 }).toMatch(/等待操作员：需批准 \d+ 个 CSR/);
    await waiting.getByRole('link', { name: '前往证书处理页面审批' }).waitFor();
    await expectChinese('node-waiting-for-csrs');
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    const row = page.getByRole('row').filter({ hasText: host.hostname });
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('等待操作员：需批准');
    await expectChinese('nodes-waiting-for-csrs', await csrNames());
    await row.getByRole('link', { name: '前往证书处理页面审批' }).click();
    await page.getByRole('heading', { name: 'lab 的证书处理', level: 1 }).waitFor();
    const pending = page.locator('ccos-csr-card[data-kind="CLIENT"]').first();
    await pending.waitFor({ timeout: 60_000 });
    await expectChinese('csrs-client-pending', await csrNames());
    await pending.getByRole('button', { name: '批准' }).click();
    const approve = page.getByRole('dialog', { name: /^批准 csr-/ });
    await expectChinese('csr-approve-dialog', await csrNames());
    await approve.getByRole('button', { name: '批准' }).click();
    await approve.waitFor({ state: 'hidden' });
    const serving = page.locator('ccos-csr-card[data-kind="SERVING"]').first();
    await serving.waitFor({ timeout: 60_000 });
    await serving.getByRole('button', { name: '批准' }).click();
    await page.getByRole('dialog', { name: /^批准 csr-/ }).getByRole('button', { name: '批准' }).click();
    await expect.poll(() => page.locator('ccos-csr-card [data-status="APPROVED"]').count(), { timeout: 30_000 }).toBe(2);
    await expectChinese('csrs-decided', await csrNames());

    await page.goto(nodeUrl);
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 120_000 }).toBe('JOINED');
    await expect.poll(() => page.getByTestId('run-status').first().getAttribute('data-status'), { timeout: 30_000 }).toBe('SUCCEEDED');
    await expectChinese('node-joined');
  });

  it('inspects what the joined host runs and names a unit edited by hand, in Chinese', async () => {
    const host = world.lab.hosts[0];
    const unit = '/etc/systemd/system/ccos-node-init.service';
    const card = page.getByTestId('host-manifest');
    await card.waitFor({ timeout: 30_000 });
    await card.getByRole('button', { name: '立即检查' }).click();
    await expect.poll(() => card.getAttribute('data-state'), { timeout: 30_000 }).toBe('CURRENT');
    await world.lab.exec(host.hostname, ['sh', '-c', `echo '# edited by hand' >> ${unit}`]);
    try {
      await card.getByRole('button', { name: '立即检查' }).click();
      await expect.poll(() => card.getAttribute('data-state'), { timeout: 30_000 }).toBe('DRIFTED');
      expect(await card.locator(`li[data-path="${unit}"]`).textContent()).toMatch(/已修改（记录为 [0-9a-f]{12}…，现为 [0-9a-f]{12}…）/);
      await expectChinese('node-drifted', [unit]);
    } finally {
      await world.lab.exec(host.hostname, ['sed', '-i', '$d', unit]);
    }
  });

  it('previews and runs the removal of a node with workloads, following the drain live in Chinese', async () => {
    const host = world.lab.hosts[0];
    plantWorkloads(host.hostname);
    await page.getByRole('main').getByRole('link', { name: '移除节点' }).click();
    await page.getByRole('heading', { name: `移除 ${host.hostname}`, level: 1 }).waitFor();
    const preview = page.getByTestId('removal-preview');
    await preview.locator('li.failed').first().waitFor({ timeout: 30_000 });
    // The only worker: the safety check says so in Chinese.
    expect(await preview.textContent()).toContain('将不再有其他可调度且就绪的 worker 节点');
    // kubectl's refusal, by its code, when --force is not given for the unmanaged pod.
    await page.getByLabel(/--force/).setChecked(false);
    await expect.poll(() => preview.textContent(), { timeout: 30_000 }).toContain('未声明控制器的 Pod（使用 --force 可强制驱逐），无法删除：default/debug-shell');
    await expectChinese('remove-preview-refused');
    await page.getByLabel(/--force/).setChecked(true);
    await page.getByLabel(/--ignore-daemonsets/).setChecked(true);
    await expect.poll(() => preview.textContent(), { timeout: 30_000 }).toContain('将删除未声明控制器的 Pod：default/debug-shell');
    const previewText = await preview.textContent();
    expect(previewText).toContain('忽略由 DaemonSet 管理的 Pod：kube-system/node-agent-1');
    expect(previewText).toContain('由 ReplicaSet/web 管理');
    await expectChinese('remove-preview');
    // The budget has had its say in the preview; without it the drain evicts at once.
    world.sim.api.delete(world.sim.resource('poddisruptionbudgets'), 'shop', 'web-budget', { user: CLUSTER_ADMIN });
    await page.getByRole('textbox', { name: '输入节点名以确认' }).fill(host.hostname);
    await page.getByLabel('允许移除最后一个 worker').check();
    const submit = page.getByRole('button', { name: '移除节点' });
    await expect.poll(() => submit.isDisabled(), { timeout: 20_000 }).toBe(false);
    await expectChinese('remove-ready');
    await submit.click();
    await page.getByRole('heading', { name: host.hostname, level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('removal-status').getAttribute('data-status'), { timeout: 120_000 }).toBe('SUCCEEDED');
    // The drain's log in Chinese: the DaemonSet's pod left in place, the others evicted.
    const removal = page.locator('ccos-removal-run').first();
    await expect.poll(() => removal.textContent(), { timeout: 30_000 }).toContain('忽略由 DaemonSet 管理的 Pod');
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('REMOVED');
    await expectChinese('node-removed');
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('row').filter({ hasText: host.hostname }).waitFor();
    await expectChinese('nodes-removed');
  });

  it("shows the bulk-add range check and the pools page, with a spare's reason, in Chinese", async () => {
    // The console's own range check words its problem from the shared catalogue's code.
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes/bulk`);
    await page.getByRole('heading', { name: '批量录入节点', level: 1 }).waitFor();
    await page.getByRole('radio', { name: '地址范围' }).check();
    await page.getByRole('textbox', { name: '地址范围' }).fill('198.18.0.29-198.18.0.20');
    await expect.poll(() => page.getByTestId('range-problem').textContent()).toBe('范围的结束地址（198.18.0.20）在起始地址（198.18.0.29）之前');
    // The pattern's placeholders ({n}, {octet}) are typed as they are.
    await expectChinese('bulk-range-problem', ['198.18.0.29-198.18.0.20', '198.18.0.20', '198.18.0.29', '{n}', '{octet}']);

    // Last, so the other screens show the lab host alone. A node group with a spare nobody answers for (port 1): its member reason and the decisions, by code.
    const created = await world.gql<{ createNodeGroup: { id: string } }>('mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }', {
      input: { clusterId: world.clusterId, name: 'pool-zh', minSize: 0, maxSize: 1, profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3 } },
    });
    const groupId = created.data?.createNodeGroup.id ?? '';
    const added = await world.gql<{ addNodeGroupSpare: { nodeId: string } }>('mutation($input: AddSpareInput!) { addNodeGroupSpare(input: $input) { nodeId } }', {
      input: { groupId, hostname: 'spare-zh', ip: '127.0.0.1', sshPort: 1, sshUser: 'root', password: 'spare-password-zh' },
    });
    expect(added.errors).toBeUndefined();
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/pools`);
    await page.getByRole('heading', { name: '资源池', level: 1 }).waitFor();
    const host = page.locator('section[data-group="pool-zh"]').getByTestId('hosts').locator('tbody tr');
    await expect.poll(() => host.first().getAttribute('data-state'), { timeout: 60_000 }).toBe('UNUSABLE');
    await expect.poll(() => host.first().locator('.reason').textContent()).toContain('录入节点的检查未通过（无法连接）');
    // What the SSH library said about the refused connection is data, shown as it is inside the coded reason.
    const spare = await world.gql<{ node: { statusReasonParams: Record<string, unknown> | null } }>('query($id: ID!) { node(id: $id) { statusReasonParams } }', { id: added.data?.addNodeGroupSpare.nodeId });
    const sshWords = Object.values(spare.data?.node.statusReasonParams ?? {}).filter((value): value is string => typeof value === 'string');
    await expectChinese('pools', ['pool-zh', 'spare-zh', '127.0.0.1', ...sshWords]);
  });

  it('showed no English on any of these screens', () => {
    expect(english).toEqual({});
    expect(screens.length).toBeGreaterThanOrEqual(20);
  });

  it('raised no uncaught errors in the page', () => {
    expect(record.pageErrors).toEqual([]);
  });
});

/** The data of this world that may show on any screen: names, addresses, what the host says about itself, the CSRs' names and usages. */
async function worldData(): Promise<string[]> {
  const host = world.lab.hosts[0];
  const nodes = await world.gql<{ nodes: Array<{ facts: Record<string, unknown> }> }>('query($id: ID!) { nodes(clusterId: $id) { facts { osRelease kernel arch } } }', { id: world.clusterId });
  const facts = (nodes.data?.nodes ?? []).flatMap((node) => Object.values(node.facts).filter((value): value is string => typeof value === 'string'));
  return [
    'lab', 'admin', host.hostname, host.ip, host.user, world.lab.vip, ...facts, ...hostFacts, ...KEY_USAGES, ...WORKLOAD_NAMES, ...(await csrNames()), ...(await failedAnswerHeads()), ...(await clusterCheckParams()),
  ];
}

/** What the cluster page's readiness checks name (the bootstrap namespace, the service's user): parameters of their reasons, data. */
async function clusterCheckParams(): Promise<string[]> {
  const checks = await world.gql<{ clusterChecks: Array<{ reasonParams: Record<string, unknown> | null }> }>('query($id: ID!) { clusterChecks(clusterId: $id) { reasonParams } }', { id: world.clusterId });
  return (checks.data?.clusterChecks ?? []).flatMap((check) => Object.values(check.reasonParams ?? {}).filter((value): value is string => typeof value === 'string'));
}

/** The first bytes of what answered in place of the machine config server, as the failures quote them (data: the answer's own words). */
async function failedAnswerHeads(): Promise<string[]> {
  const runs = await world.gql<{ nodes: Array<{ installRuns: Array<{ events: Array<{ status: string; detail: Record<string, unknown> | null }> }> }> }>(
    'query($id: ID!) { nodes(clusterId: $id) { installRuns { events { status detail } } } }',
    { id: world.clusterId },
  );
  return (runs.data?.nodes ?? [])
    .flatMap((node) => node.installRuns.flatMap((run) => run.events))
    .map((event) => event.detail?.['bodyHead'])
    .filter((head): head is string => typeof head === 'string')
    .map((head) => head.replace(/\s+/g, ' ').trim());
}

/**
 * What runs on the node before its removal, as the cluster's controllers would have left it: a
 * ReplicaSet's pod under a PodDisruptionBudget, a DaemonSet's pod and a pod no controller owns.
 */
function plantWorkloads(node: string): void {
  const { sim } = world;
  const as = { user: CLUSTER_ADMIN };
  const running = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  sim.api.create(sim.resource('namespaces'), undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }, as);
  const owner = (kind: string, object: { metadata: { name?: string; uid?: string } }) => [{ apiVersion: 'apps/v1', kind, name: object.metadata.name, uid: object.metadata.uid, controller: true }];
  const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: app }] } });
  const replicaSet = sim.api.create(sim.resource('replicasets'), 'shop', { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: template('web') } }, as);
  const daemonSet = sim.api.create(sim.resource('daemonsets'), 'kube-system', { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'node-agent' }, spec: { selector: { matchLabels: { app: 'node-agent' } }, template: template('node-agent') } }, as);
  const pod = (namespace: string, name: string, app: string, ownerReferences: unknown[]) =>
    sim.api.create(sim.resource('pods'), namespace, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app }, ...(ownerReferences.length > 0 ? { ownerReferences } : {}) },
      spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: app }] }, status: running,
    }, as);
  pod('shop', 'web-1', 'web', owner('ReplicaSet', replicaSet));
  pod('kube-system', 'node-agent-1', 'node-agent', owner('DaemonSet', daemonSet));
  pod('default', 'debug-shell', 'debug-shell', []);
  sim.api.create(sim.resource('poddisruptionbudgets'), 'shop', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web-budget' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } }, as);
}

/** The names of the cluster's CSRs, which the certificate page shows as data. */
async function csrNames(): Promise<string[]> {
  return world.sim.store.list(world.sim.resource('certificatesigningrequests')).map((csr) => csr.metadata.name ?? '');
}

/** Records every Latin word outside data and technical names on the screen (the last test fails on any), and keeps a screenshot of it. */
async function expectChinese(name: string, extraData: readonly string[] = []): Promise<void> {
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await screenshot(page, SCREENSHOTS, `${name}-zh`);
  expect(await page.evaluate('document.documentElement.lang')).toBe('zh-CN');
  const words = await latinWordsOnScreen(page, [...(await worldData()), ...extraData]);
  screens.push(name);
  if (words.length > 0) {
    english[name] = words;
  }
}
