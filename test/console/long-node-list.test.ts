import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { type PageRecord, launchChromium, openConsolePage, screenshot, signInAsAdmin } from '../support/console-browser';

/**
 * A long node list in Chromium: a kube-sim cluster of 600 Nodes, discovered by the built API.
 * The page renders only the rows in view (and a few around them), yet the table still tells
 * assistive technology how many rows it has and where each shown row is; scrolling brings the
 * last node in; the filter and the live updates work on the whole list, rendered or not.
 * Needs `npx nx run-many -t build -p api console`.
 */
const NODES = 600;
const SCREENSHOTS = 'tmp/console-long-list-e2e';
const nameOf = (index: number) => `worker-${String(index).padStart(4, '0')}`;

let api: ApiProcess;
let sim: KubeSim;
let browser: Browser;
let page: Page;
let record: PageRecord;
let listUrl = '';

const rows = () => page.locator('tr[data-node]');

describe('console: a long node list', () => {
  beforeAll(async () => {
    [api, sim, browser] = await Promise.all([startApiProcess(), startKubeSim({ seed: SHIPPED_RBAC, watchCacheSize: 2 * NODES }), launchChromium()]);
    for (let index = 0; index < NODES; index++) {
      sim.api.seed(sim.resource('nodes'), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: nameOf(index), labels: { 'node-role.kubernetes.io/worker': '' } },
        status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `10.30.${Math.floor(index / 250)}.${(index % 250) + 2}` }] },
      });
    }
    const token = await api.login();
    const registered = await api.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'long', apiServerUrl: sim.url, vip: '198.18.0.1', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: false } },
      token,
    );
    const clusterId = registered.data?.registerCluster.id ?? '';
    expect(registered.errors).toBeUndefined();
    // Discovery takes a few seconds; beforeAll cannot use expect.poll.
    for (let seen = 0, deadline = Date.now() + 120_000; seen < NODES; ) {
      seen = (await api.gql<{ nodes: unknown[] }>('query($c: ID!) { nodes(clusterId: $c) { id } }', { c: clusterId }, token)).data?.nodes.length ?? 0;
      if (seen < NODES && Date.now() > deadline) {
        throw new Error(`only ${seen} of ${NODES} nodes discovered`);
      }
      if (seen < NODES) {
        await new Promise((wake) => setTimeout(wake, 250));
      }
    }
    listUrl = `${api.url}/clusters/${clusterId}/nodes`;
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

  it('shows the first rows of 600 without putting all of them in the page, and says how many there are', async () => {
    await signInAsAdmin(page, api.url);
    await page.goto(listUrl);
    await page.getByRole('link', { name: nameOf(0), exact: true }).waitFor();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `${NODES}` }).first().textContent()).toContain(`${NODES} of ${NODES}`);

    const table = page.getByRole('table');
    // The header row and every node row, rendered or not.
    expect(await table.getAttribute('aria-rowcount')).toBe(String(NODES + 1));
    const rendered = await rows().count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(120);
    expect(await rows().first().getAttribute('aria-rowindex')).toBe('2');
    // The table stays a table: its column headers are there for every row.
    expect(await page.getByRole('columnheader').count()).toBe(7);
    await screenshot(page, SCREENSHOTS, 'top');
  });

  it('brings the last node in when the list is scrolled to its end, still with few rows in the page', async () => {
    const frame = page.getByRole('region', { name: 'Nodes of long' });
    await frame.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
    const last = page.getByRole('link', { name: nameOf(NODES - 1), exact: true });
    await last.waitFor();
    expect(await page.locator(`tr[data-node="${nameOf(NODES - 1)}"]`).getAttribute('aria-rowindex')).toBe(String(NODES + 1));
    expect(await page.getByRole('link', { name: nameOf(0), exact: true }).count()).toBe(0);
    expect(await rows().count()).toBeLessThan(120);
    // The column headers stay in view above the rows.
    const header = await page.getByRole('columnheader').first().boundingBox();
    const frameBox = await frame.boundingBox();
    expect(Math.abs((header?.y ?? -100) - (frameBox?.y ?? 0))).toBeLessThan(4);
    await screenshot(page, SCREENSHOTS, 'bottom');
    await frame.evaluate((element) => element.scrollTo({ top: 0 }));
    await page.getByRole('link', { name: nameOf(0), exact: true }).waitFor();
  });

  it('shows a node cordoned in the cluster live, in view or scrolled out of it', async () => {
    const admin = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };
    const cordon = (name: string) => sim.api.patch(sim.resource('nodes'), undefined, name, 'application/merge-patch+json', { spec: { unschedulable: true } }, { user: admin });
    cordon(nameOf(1));
    await page.locator(`tr[data-node="${nameOf(1)}"]`).getByText('Cordoned').waitFor({ timeout: 30_000 });
    // Far below the rows in view: not in the page, yet its change is kept for when it is.
    cordon(nameOf(NODES - 3));
    const frame = page.getByRole('region', { name: 'Nodes of long' });
    await expect
      .poll(
        async () => {
          await frame.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
          return page.locator(`tr[data-node="${nameOf(NODES - 3)}"]`).getByText('Cordoned').count();
        },
        { timeout: 30_000 },
      )
      .toBe(1);
    await frame.evaluate((element) => element.scrollTo({ top: 0 }));
    await page.getByRole('link', { name: nameOf(0), exact: true }).waitFor();
  });

  it('filters the whole list, rendered or not, and comes back to all of it', async () => {
    const select = page.getByLabel('Status');
    await select.selectOption('attention');
    await page.getByText('No node has this status.').waitFor();
    expect(await rows().count()).toBe(0);
    await select.selectOption('all');
    await page.getByRole('link', { name: nameOf(0), exact: true }).waitFor();
    expect(await rows().count()).toBeLessThan(120);
    expect(record.pageErrors).toEqual([]);
  });

  it('shows the first page at once while the whole list comes, and counts and filters only the whole list', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let wholeListAsked = false;
    await page.route('**/graphql', async (route) => {
      const body = route.request().postDataJSON() as { operationName?: string; variables?: { first?: number } } | null;
      if (body?.operationName === 'NodeList' && body.variables?.first === undefined) {
        wholeListAsked = true;
        await held;
      }
      await route.continue();
    });
    try {
      await page.goto(listUrl);
      await page.getByRole('link', { name: nameOf(0), exact: true }).waitFor();
      await expect.poll(() => wholeListAsked).toBe(true);
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'loading the rest' }).count()).toBe(1);
      expect(await page.getByRole('status').filter({ hasText: 'loading the rest' }).textContent()).toContain('The first 200 nodes shown');
      expect(await page.getByLabel('Status').isDisabled()).toBe(true);
      // No count that covers only the first page.
      expect(await page.getByLabel('Status').locator('option[value="all"]').textContent()).toBe('All statuses');
      expect(await page.getByRole('table').getAttribute('aria-rowcount')).toBe('201');
      release();
      await expect.poll(() => page.getByRole('status').filter({ hasText: `${NODES} of ${NODES}` }).count()).toBe(1);
      expect(await page.getByLabel('Status').isEnabled()).toBe(true);
      expect(await page.getByRole('table').getAttribute('aria-rowcount')).toBe(String(NODES + 1));
    } finally {
      release();
      await page.unroute('**/graphql');
    }
    expect(record.pageErrors).toEqual([]);
  });
});
