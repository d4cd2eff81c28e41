import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { type PageRecord, launchChromium, openConsolePage, screenshot, signInAsAdmin } from '../support/console-browser';

/**
 * The Inventory page in Chromium, in English and Chinese: a file is planned (an add, a relabel, a
 * removal with its drain's preview, in a table), a file with an inline password is refused under
 * the field, and a plan is applied through the confirmation (the Node is relabelled, the removal
 * starts). The cluster is kube-sim; its workers are recorded as added here. No host is contacted.
 * Needs `npx nx run-many -t build -p api console`.
 */
const SCREENSHOTS = 'tmp/console-inventory-e2e';
const worker = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, 'node-role.kubernetes.io/worker': '', ...labels } },
  status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `198.18.0.${name.slice(1)}` }], allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
});
const HEAD = 'apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: inv\nhosts:\n';
const PLANNED = `${HEAD}  - {hostname: w1, ip: 198.18.0.1}\n  - {hostname: w2, ip: 198.18.0.2, labels: {zone: b}}\n  - {hostname: w3, remove: true}\n  - {hostname: w9, ip: 198.18.0.9}\n`;
const APPLIED = `${HEAD}  - {hostname: w1, ip: 198.18.0.1}\n  - {hostname: w2, ip: 198.18.0.2, labels: {zone: b}}\n  - {hostname: w3, remove: true}\n`;

let api: ApiProcess;
let sim: KubeSim;
let browser: Browser;
let page: Page;
let record: PageRecord;
let pageUrl = '';

const documentField = () => page.getByRole('textbox', { name: /^(Inventory file|清单文件)/ });
const row = (kind: string, host: string) => page.locator(`[data-testid=changes] tr[data-change="${kind}"][data-host="${host}"]`);

describe('console: the inventory page', () => {
  beforeAll(async () => {
    [api, sim, browser] = await Promise.all([startApiProcess(), startKubeSim({ seed: SHIPPED_RBAC }), launchChromium()]);
    for (const node of [worker('w1'), worker('w2', { zone: 'a' }), worker('w3')]) {
      sim.api.seed(sim.resource('nodes'), node);
    }
    const token = await api.login();
    const registered = await api.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'inv', apiServerUrl: sim.url, vip: '198.18.0.250', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: false } },
      token,
    );
    expect(registered.errors).toBeUndefined();
    const clusterId = registered.data?.registerCluster.id ?? '';
    for (let seen = 0, deadline = Date.now() + 60_000; seen < 3; ) {
      seen = (await api.gql<{ nodes: unknown[] }>('query($c: ID!) { nodes(clusterId: $c) { id } }', { c: clusterId }, token)).data?.nodes.length ?? 0;
      if (seen < 3 && Date.now() > deadline) {
        throw new Error(`only ${seen} of 3 nodes discovered`);
      }
      if (seen < 3) {
        await new Promise((wake) => setTimeout(wake, 250));
      }
    }
    // The workers joined through this service (what an install leaves): its records, with the labels it gave them.
    const database = new pg.Client({ connectionString: api.database?.url });
    await database.connect();
    try {
      await database.query(`UPDATE nodes SET origin = 'ADDED', ssh_port = 22, ssh_user = 'root' WHERE cluster_id = $1`, [clusterId]);
      await database.query(`UPDATE nodes SET labels = '[{"key":"zone","value":"a"}]' WHERE cluster_id = $1 AND hostname = 'w2'`, [clusterId]);
    } finally {
      await database.end();
    }
    pageUrl = `${api.url}/clusters/${clusterId}/inventory`;
    ({ page, record } = await openConsolePage(browser, api.observe));
  }, 300_000);

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && page) {
      const file = await screenshot(page, SCREENSHOTS, `failed-${context.task.name}`).catch(() => 'none');
      console.error(`screenshot of the failure: ${file}\nAPI log tail:\n${api?.output().slice(-2000)}`);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
    await sim?.stop();
  });

  it('shows the plan of a file in English: an add, a relabel, a removal with its preview', async () => {
    await signInAsAdmin(page, api.url);
    await page.goto(pageUrl);
    await page.getByRole('heading', { name: 'Inventory', level: 1 }).waitFor();
    await documentField().fill(PLANNED);
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    await expect.poll(() => page.getByTestId('plan-summary').textContent()).toBe('1 to add and install, 0 to install, 1 to relabel, 1 to remove, 0 to forget; 1 unchanged.');
    expect(await row('ADD', 'w9').locator('td').allInnerTexts()).toEqual(['Add and install', 'w9', '198.18.0.9', '—', '']);
    expect(await row('RELABEL', 'w2').locator('td').nth(3).innerText()).toBe('zone=a → zone=b');
    expect(await row('REMOVE', 'w3').locator('td').nth(4).innerText()).toBe('evicts 0 pod(s), leaves 0; 0 would stop it');
    // Hosts to add need their password before the plan can be applied.
    await expect.poll(() => page.getByRole('button', { name: 'Apply…' }).isDisabled()).toBe(true);
    await expect.poll(() => page.getByLabel(/^SSH password of the hosts to add/).isVisible()).toBe(true);
    await screenshot(page, SCREENSHOTS, 'plan-en');
    expect(record.pageErrors).toEqual([]);
  });

  it('refuses a file with an inline password under the field, naming where it is, and plans nothing', async () => {
    await documentField().fill(`${HEAD}  - {hostname: w9, ip: 198.18.0.9, password: in-the-file}\n`);
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    const field = documentField();
    await expect.poll(async () => (await field.getAttribute('aria-invalid')) ?? '').toBe('true');
    const error = page.locator('ccos-file-text-field .error');
    expect(await error.innerText()).toContain('hosts[0] (w9): "password" would put a secret into the file');
    expect(await page.getByTestId('plan').count()).toBe(0);
  });

  it('shows the plan in Chinese', async () => {
    await page.getByRole('button', { name: '简体中文' }).click();
    await page.getByRole('heading', { name: '清单', level: 1 }).waitFor();
    await documentField().fill(PLANNED);
    await page.getByRole('button', { name: '生成计划', exact: true }).click();
    await expect.poll(() => page.getByTestId('plan-summary').textContent()).toBe('录入并安装 1 台，安装 0 台，修改标签 1 台，移除 1 台，删除记录 0 台；1 台无变化。');
    expect(await row('ADD', 'w9').locator('td').first().innerText()).toBe('录入并安装');
    expect(await row('REMOVE', 'w3').locator('td').nth(4).innerText()).toBe('驱逐 0 个 Pod，保留 0 个；0 个会使其中止');
    await screenshot(page, SCREENSHOTS, 'plan-zh');
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Inventory', level: 1 }).waitFor();
  });

  it('applies a plan through the confirmation: the Node is relabelled and the removal starts', async () => {
    await documentField().fill(APPLIED);
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    await expect.poll(() => page.getByTestId('plan-summary').textContent()).toBe('0 to add and install, 0 to install, 1 to relabel, 1 to remove, 0 to forget; 1 unchanged.');
    await page.getByRole('button', { name: 'Apply…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Apply the plan to inv?' });
    await dialog.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('heading', { name: 'Applied', level: 2 }).waitFor();
    await page.getByRole('link', { name: 'Removal of w3 started: follow it on its node page.' }).waitFor();
    const w2 = sim.api.get(sim.resource('nodes'), undefined, 'w2');
    expect(w2.metadata?.labels?.['zone']).toBe('b');
    // Planned again, the applied file changes nothing more than the removal under way.
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    await expect.poll(() => page.getByTestId('plan-summary').textContent()).toBe('0 to add and install, 0 to install, 0 to relabel, 0 to remove, 0 to forget; 3 unchanged.');
    expect(record.pageErrors).toEqual([]);
  });
});
