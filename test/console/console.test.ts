import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import type { KubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, E2E_ADMIN_PASSWORD } from '../support/api-process';
import { type PageRecord, descriptionOf, screenshot } from '../support/console-browser';
import { startApiAndKubeSim, useConsoleWorld } from '../support/console-world';

/**
 * The console in Chromium against the built API (which serves it), driven as a person
 * would: by roles and labels. The cluster it registers is a kube-sim API server, so the
 * service's background work on registered clusters has a real endpoint to talk to.
 * Needs `dist/apps/console/browser` and `dist/apps/api/main.js`
 * (`npx nx run-many -t build -p api console`). The tests run in order and share one page.
 */
const SCREENSHOTS = 'tmp/console-e2e';

let api: ApiProcess;
let sim: KubeSim;
let page: Page;
let record: PageRecord;
let clusterUrl = '';
/** The service's account in the simulator, bound to the shipped roles: what an operator registers. */
let serviceKubeconfig = '';

describe('console', () => {
  const shared = useConsoleWorld({ start: startApiAndKubeSim, screenshots: SCREENSHOTS, page: { viewport: { width: 1280, height: 800 }, actionTimeoutMs: 10_000 } });
  beforeAll(() => {
    ({ page, record } = shared);
    ({ api, sim } = shared.world);
    serviceKubeconfig = shippedIdentityKubeconfig(sim);
  });

  it('shows the API error for a wrong password, then signs the admin in', async () => {
    await page.goto(api.url);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Sign-in failed' });
    expect(await alert.textContent()).toContain('wrong user name or password');
    expect(new URL(page.url()).pathname).toBe('/sign-in');

    await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    await page.getByText('No clusters registered yet').waitFor();
    expect(new URL(page.url()).pathname).toBe('/clusters');
  });

  it('catches an invalid VIP before sending, then registers the cluster', async () => {
    await page.getByRole('link', { name: 'Register cluster' }).first().click();
    await page.getByRole('heading', { name: 'Register cluster', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('prod-east');
    await page.getByRole('textbox', { name: 'API server URL' }).fill(sim.url);
    const vip = page.getByRole('textbox', { name: 'Master VIP' });
    await vip.fill('10.0.0.300');
    await page.getByRole('textbox', { name: 'kubeconfig', exact: true }).fill(serviceKubeconfig);
    await page.getByRole('button', { name: 'Register cluster' }).click();

    await expect.poll(() => descriptionOf(vip)).toContain('Enter an IPv4 or IPv6 address');
    expect(await vip.getAttribute('aria-invalid')).toBe('true');
    expect(await isFocused(vip)).toBe(true);
    expect(record.graphqlOperations).not.toContain('RegisterCluster');

    await vip.fill('127.0.0.1');
    await page.getByRole('button', { name: 'Register cluster' }).click();
    await page.getByRole('heading', { name: 'prod-east', level: 1 }).waitFor();
    await page.getByText('Cluster prod-east registered').first().waitFor();
    clusterUrl = page.url();
    expect(new URL(clusterUrl).pathname).toMatch(/^\/clusters\/[0-9a-f-]{36}$/);
    expect(record.graphqlOperations.filter((name) => name === 'RegisterCluster')).toHaveLength(1);
  });

  it('shows the server error for a duplicate name next to the name field', async () => {
    await page.goto(`${api.url}/clusters/new`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('prod-east');
    await page.getByRole('textbox', { name: 'API server URL' }).fill('https://api.other.example.com:6443');
    await page.getByRole('textbox', { name: 'Master VIP' }).fill('192.168.20.5');
    await page.getByRole('textbox', { name: 'kubeconfig', exact: true }).fill(serviceKubeconfig);
    await page.getByRole('button', { name: 'Register cluster' }).click();

    const name = page.getByRole('textbox', { name: 'Name', exact: true });
    await expect.poll(() => descriptionOf(name)).toContain('"prod-east" is already registered');
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await descriptionOf(page.getByRole('textbox', { name: 'Master VIP' }))).not.toContain('already');
    // Editing the field clears the server's complaint about it.
    await name.fill('prod-west');
    expect(await descriptionOf(name)).not.toContain('already registered');
  });

  it('lists the registered cluster', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Clusters' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'prod-east' }) });
    await row.waitFor();
    expect(await row.textContent()).toContain(sim.url);
    expect(await row.textContent()).toContain('Off');
    expect(await page.getByRole('row').count()).toBe(2);
  });

  it('turns CSR auto-approve on after a confirmation that explains it, and keeps it after a reload', async () => {
    await page.getByRole('link', { name: 'prod-east' }).click();
    const toggle = page.getByRole('switch', { name: 'Approve node certificates automatically' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');

    await toggle.click();
    const dialog = page.getByRole('dialog', { name: 'Turn on automatic certificate approval?' });
    await dialog.waitFor();
    const explanation = (await dialog.textContent()) ?? '';
    expect(explanation).toContain('node name and IP addresses match');
    expect(explanation).toContain('never approved');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');

    await toggle.click();
    await dialog.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true');
    await page.getByText('Automatic certificate approval is on for prod-east').first().waitFor();

    await page.reload();
    await page.getByRole('heading', { name: 'prod-east', level: 1 }).waitFor();
    expect(await page.getByRole('switch', { name: 'Approve node certificates automatically' }).getAttribute('aria-checked')).toBe('true');
  });

  it('shows the cluster\'s artifact set: none for its release, and every item installs need', async () => {
    const card = page.getByTestId('artifact-set');
    await card.getByRole('heading', { name: 'Install artifacts' }).waitFor();
    await card.getByText('Incomplete: installs are refused').waitFor();
    // kube-sim's /version, read by the service.
    expect(await card.getByTestId('artifact-cluster-version').textContent()).toContain('1.32.0-kube-sim');
    expect(await card.getByTestId('artifact-cluster-version').textContent()).toContain("from the API server's /version");
    const missing = await card.getByTestId('artifact-missing').getByRole('listitem').allTextContents();
    expect(missing).toEqual(expect.arrayContaining(['binary/oc', 'binary/kubelet', 'unit/kubelet.service']));
    expect(await card.textContent()).toContain('npm run artifacts -- import');
  });

  it('adds a webhook receiver on the cluster page, shows its secret once, and lists each delivery of a node\'s events', async () => {
    const received: Array<{ type: string; new_state: string }> = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push(JSON.parse(body) as { type: string; new_state: string });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
    try {
      const card = page.getByTestId('webhooks');
      await card.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await card.getByText('No receivers.').waitFor();
      const form = card.getByRole('form', { name: 'Add a webhook receiver' });
      await form.getByLabel('Receiver URL').fill('ftp://hooks.example.com/x');
      await form.getByRole('button', { name: 'Add receiver' }).click();
      await form.getByText('give an http:// or https:// URL of the receiver').waitFor();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
      await form.getByLabel('Receiver URL').fill(url);
      await form.getByLabel('Description').fill('on-call');
      await form.getByRole('button', { name: 'Add receiver' }).click();
      const secret = (await card.getByTestId('webhook-secret').locator('code').textContent()) ?? '';
      expect(secret).toMatch(/^whsec_/);
      await card.getByRole('button', { name: 'I have kept it' }).click();
      await card.getByTestId('webhook-secret').waitFor({ state: 'hidden' });
      expect(await card.textContent()).not.toContain(secret);

      // A node added through the API (its host does not answer): its events reach the receiver, and the card lists them.
      const token = await api.login();
      const clusterId = (await api.gql<{ clusters: Array<{ id: string; name: string }> }>('{ clusters { id name } }', {}, token)).data?.clusters.find((cluster) => cluster.name === 'prod-east')?.id;
      const added = await api.gql('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', { input: { clusterId, hostname: 'hooked-1', ip: '127.0.0.1', sshPort: 1, sshUser: 'root', password: 'webhook-test-password-1' } }, token);
      expect(added.errors).toBeUndefined();
      await expect.poll(() => received.map((event) => event.type), { timeout: 30_000 }).toEqual(['node.added', 'node.changed']);
      expect(received.map((event) => event.new_state)).toEqual(['ADDING', 'UNREACHABLE']);
      const endpoint = card.getByTestId('webhook-endpoint').filter({ hasText: url });
      await endpoint.getByRole('button', { name: 'Deliveries' }).click();
      const log = endpoint.getByTestId('webhook-deliveries');
      await expect.poll(async () => (await log.locator('tbody tr').allTextContents()).map((row) => row.replace(/\s+/g, ' ')).join('|'), { timeout: 15_000 }).toMatch(/node\.changed.*delivered 204.*\|.*node\.added.*delivered 204/);
      await endpoint.getByText(/^last delivered /).waitFor();
      await screenshot(page, SCREENSHOTS, 'cluster-webhooks');
    } finally {
      await new Promise((closed) => receiver.close(closed));
    }
  });

  it('holds an operator\'s forced removal for a second person with four-eyes on, shows it live with what it would do, and runs it once the admin approves', async () => {
    const card = page.getByTestId('approvals');
    await card.getByRole('heading', { name: 'Four-eyes approvals' }).waitFor();
    const toggle = card.getByRole('switch', { name: 'Require a second person' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await toggle.click();
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true');
    await card.getByText('Nothing waits.').waitFor();

    // A worker found in the cluster, with a pod no controller would bring back: only a forced drain deletes it.
    sim.api.seed(sim.resource('nodes'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'held-1', labels: { 'node-role.kubernetes.io/worker': '' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    sim.api.seed(sim.resource('nodes'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'spare-1', labels: { 'node-role.kubernetes.io/worker': '' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    sim.api.seed(sim.resource('pods'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'handmade', namespace: 'default' }, spec: { nodeName: 'held-1', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Running' } });
    const admin = await api.login();
    const clusterId = (await api.gql<{ clusters: Array<{ id: string; name: string }> }>('{ clusters { id name } }', {}, admin)).data?.clusters.find((cluster) => cluster.name === 'prod-east')?.id;
    expect((await api.gql('mutation($input: CreateUserInput!) { createUser(input: $input) { id } }', { input: { username: 'night-operator', password: 'night-operator-password-1', role: 'OPERATOR' } }, admin)).errors).toBeUndefined();
    const operator = await api.login('night-operator', 'night-operator-password-1');
    const heldNode = async () => (await api.gql<{ nodes: Array<{ id: string; hostname: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname } }', { c: clusterId }, admin)).data?.nodes.find((node) => node.hostname === 'held-1')?.id;
    await expect.poll(heldNode, { timeout: 15_000 }).toBeTruthy();
    const nodeId = await heldNode();
    const held = await api.gql('mutation($n: ID!) { removeNode(nodeId: $n, options: { force: true }) { id } }', { n: nodeId }, operator);
    expect(held.errors?.[0]?.extensions?.['messageCode']).toBe('approval.required');

    const request = card.getByTestId('approval-request').filter({ hasText: 'held-1' });
    await request.waitFor({ timeout: 15_000 });
    expect(await request.textContent()).toContain('asked by night-operator');
    await request.getByRole('list', { name: 'What it would do' }).getByText(/default\/handmade/).waitFor();
    await screenshot(page, SCREENSHOTS, 'cluster-approvals');
    await request.getByRole('button', { name: 'Approve and run' }).click();
    await page.getByText('Approved: the action on held-1 runs').first().waitFor();
    const decided = card.getByTestId('approval-decisions').locator('tr[data-status="APPROVED"]').filter({ hasText: 'held-1' });
    await decided.waitFor({ timeout: 15_000 });
    expect(await decided.textContent()).toContain('approved by admin');
    await card.getByText('Nothing waits.').waitFor();
  });

  it('switches to Chinese at runtime and stays Chinese after a reload', async () => {
    await page.getByRole('button', { name: '简体中文' }).click();
    await page.getByRole('heading', { name: '证书处理' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: '集群' }).waitFor();
    // Join approval and serving-certificate renewals each have their switch, both in Chinese.
    expect(await page.getByRole('switch', { name: '自动批准节点证书' }).count()).toBe(1);
    expect(await page.getByRole('switch', { name: '自动续期本服务加入的节点的服务端证书' }).count()).toBe(1);
    await page.getByTestId('artifact-set').getByText('不完整：将拒绝安装').waitFor();
    await page.getByRole('heading', { name: '安装制品' }).waitFor();
    expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');

    await page.reload();
    await page.getByRole('heading', { name: '证书处理' }).waitFor();
    expect(await page.getByRole('button', { name: '简体中文' }).getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByRole('navigation').textContent()).toContain('用户');
  });

  it('creates a VIEWER user', async () => {
    await page.getByRole('navigation').getByRole('link', { name: '用户' }).click();
    await page.getByRole('heading', { name: '用户', level: 1 }).waitFor();
    await page.getByRole('button', { name: '创建用户' }).click();
    await page.getByRole('textbox', { name: '用户名' }).fill('viewer1');
    await page.getByLabel(/^初始密码/).fill('viewer1-password');
    expect(await page.getByRole('combobox', { name: '角色', exact: true }).inputValue()).toBe('VIEWER');
    await page.getByRole('button', { name: '创建用户' }).click();
    const row = page.getByRole('row').filter({ hasText: 'viewer1' });
    await row.waitFor();
    const role = row.getByRole('combobox', { name: 'viewer1 的角色' });
    expect(await role.inputValue()).toBe('VIEWER');
    expect(await role.locator('option:checked').textContent()).toBe('只读用户');
  });

  it('shows the admin the audit log: who did what, the refused duplicate by its code, the credentials redacted', async () => {
    await page.getByRole('navigation').getByRole('link', { name: '审计日志' }).click();
    await page.getByRole('heading', { name: '审计日志', level: 1 }).waitFor();
    const log = page.getByTestId('audit-log');
    const registered = log.locator('tr[data-action="registerCluster"][data-result="SUCCESS"]');
    await registered.waitFor();
    expect(await registered.textContent()).toMatch(/admin.*registerCluster.*prod-east.*成功/s);
    expect(await log.locator('tr[data-action="createUser"]').filter({ hasText: 'viewer1' }).count()).toBe(1);

    await page.getByRole('combobox', { name: '结果' }).selectOption({ label: '失败' });
    await page.getByRole('button', { name: '搜索' }).click();
    // The duplicate cluster, the receiver URL the webhooks card refused, and the forced removal held for a second person.
    await expect.poll(() => log.locator('tbody tr').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-action')}:${row.getAttribute('data-result')}`).sort())).toEqual(['createWebhookEndpoint:FAILURE', 'registerCluster:FAILURE', 'removeNode:FAILURE']);
    const duplicate = log.locator('tr[data-action="registerCluster"]');
    expect(await duplicate.textContent()).toContain('CONFLICT');
    await duplicate.getByText('参数').click();
    const args = (await duplicate.locator('pre').textContent()) ?? '';
    expect(args).toContain('"kubeconfig": "[redacted]"');
    await screenshot(page, SCREENSHOTS, 'audit-failures-zh');
    expect(args).not.toContain(serviceKubeconfig.split('\n').find((line) => /token|key-data/.test(line))?.trim() ?? serviceKubeconfig);

    await page.getByRole('button', { name: '清除' }).click();
    await registered.waitFor();
  });

  it('registers an http:// cluster only with insecure transport allowed, and both cluster pages say how they connect', async () => {
    await page.goto(`${api.url}/clusters/new`);
    await page.getByRole('heading', { name: '注册集群', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: '名称', exact: true }).fill('lab-http');
    const url = page.getByRole('textbox', { name: 'API 服务器地址' });
    await url.fill('http://127.0.0.1:8080');
    await page.getByRole('textbox', { name: 'Master VIP' }).fill('127.0.0.1');
    await page.getByRole('textbox', { name: 'kubeconfig', exact: true }).fill(serviceKubeconfig);
    await page.getByRole('button', { name: '注册集群' }).click();
    // The API's refusal, by its code, in the page's language.
    await expect.poll(() => descriptionOf(url)).toContain('使用了 http://，集群凭据将以明文发送');

    await page.getByRole('checkbox', { name: '允许不安全传输（http:// 或 insecure-skip-tls-verify）' }).check();
    await page.getByRole('button', { name: '注册集群' }).click();
    await page.getByRole('heading', { name: 'lab-http', level: 1 }).waitFor();
    expect(await page.getByTestId('transport').textContent()).toContain('允许不安全传输');
    expect(await page.getByTestId('transport').textContent()).toContain('集群凭据可能在网络路径上被读取或截获');

    await page.getByRole('button', { name: 'English' }).click();
    await expect.poll(async () => page.getByTestId('transport').textContent()).toContain('Insecure transport allowed');
    await page.goto(clusterUrl);
    await page.getByRole('heading', { name: 'prod-east', level: 1 }).waitFor();
    expect(await page.getByTestId('transport').textContent()).toContain('TLS, API server certificate verified');
    await page.getByRole('button', { name: '简体中文' }).click();
    await expect.poll(async () => page.getByTestId('transport').textContent()).toContain('TLS，已校验 API 服务器证书');
  });

  it('signs in as the viewer, who sees no register button, no auto-approve switch, no users page and no audit log', async () => {
    await page.getByRole('button', { name: /^账户/ }).click();
    await page.getByRole('button', { name: '退出登录' }).click();
    await page.getByRole('heading', { name: '登录', level: 1 }).waitFor();

    await page.getByRole('textbox', { name: '用户名' }).fill('viewer1');
    await page.getByLabel(/^密码/).fill('viewer1-password');
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('heading', { name: '集群', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'prod-east' }).waitFor();
    expect(await page.getByRole('link', { name: '注册集群' }).count()).toBe(0);
    expect(await page.getByRole('navigation').getByRole('link', { name: '用户' }).count()).toBe(0);
    expect(await page.getByRole('navigation').getByRole('link', { name: '审计日志' }).count()).toBe(0);

    await page.getByRole('link', { name: 'prod-east' }).click();
    await page.getByRole('heading', { name: '证书处理' }).waitFor();
    await page.getByText('仅管理员可以修改此设置。').waitFor();
    expect(await page.getByRole('switch').count()).toBe(0);
    expect(await page.getByRole('button', { name: /自动批准/ }).count()).toBe(0);

    for (const adminOnly of ['/users', '/audit']) {
      await page.goto(`${api.url}${adminOnly}`);
      await page.getByRole('heading', { name: '集群', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/clusters');
    }
  });

  it('raised no uncaught errors in the page', () => {
    expect(record.pageErrors).toEqual([]);
  });
});

async function isFocused(control: Locator): Promise<boolean> {
  return control.evaluate((element) => element.ownerDocument.activeElement === element);
}
