import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PageRecord, RECORD_BATCH_STATUS_ROWS, batchPageLags, screenshot, signInAsAdmin } from '../support/console-browser';
import { useConsoleWorld } from '../support/console-world';
import { nodeStatusChanges } from '../support/graphql-subscriptions';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * Many hosts through the console: the bulk-add page (paste a list, see each row's problems on
 * its row, add the valid rows) and the batch page (live progress, a failure with its reason,
 * retry failed after the fault is lifted), in English, then in Chinese. A small batch: three
 * lab hosts, one of them unreachable at first. Needs `npx nx run-many -t build -p api console boot-worker`.
 */
const SCREENSHOTS = 'tmp/console-batch-e2e';
const KEEPS_SECRET = `(secret) =>
  document.documentElement.outerHTML.includes(secret) ||
  JSON.stringify({ ...sessionStorage }).includes(secret) ||
  JSON.stringify({ ...localStorage }).includes(secret) ||
  [...document.querySelectorAll('input, textarea')].some((field) => field.value === secret)`;
let world: ScaleOutWorld;
let page: Page;
let baseUrl = '';
let record: PageRecord;

describe('console: bulk add and the batch page', () => {
  const shared = useConsoleWorld({
    start: () => startScaleOutWorld({ hosts: 3, name: 'console-batch', hostnamePrefix: 'b-', csrAutoApprove: true, apiEnv: { SSH_CONNECT_TIMEOUT_MS: '4000' } }),
    screenshots: SCREENSHOTS,
    startTimeoutMs: 600_000,
  });
  beforeAll(() => {
    ({ world, page, record, baseUrl } = shared);
  });

  it('pastes a list, shows each problem on its row, refuses to add while one row is bad, then adds the valid rows as one batch', async () => {
    const { hosts } = world.lab;
    await world.lab.faults.cutLink(hosts[2].id);
    await signInAsAdmin(page, baseUrl);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('main').getByRole('link', { name: 'Add many' }).click();
    await page.getByRole('heading', { name: 'Add many nodes', level: 1 }).waitFor();

    const list = [...hosts.map((host) => `${host.hostname} ${host.ip}`), 'Bad_Name 198.18.0.300'].join('\n');
    await page.getByRole('textbox', { name: 'Hosts' }).fill(list);
    await page.getByLabel(/^Password \(for every host\)/).fill(hosts[0].password);
    const rows = page.getByTestId('bulk-rows');
    // Checked as typed: line 4 carries both of its problems, the others none.
    await expect.poll(() => rows.locator('tr[data-line="4"] .problem').allTextContents()).toEqual([
      expect.stringMatching(/^Host name: "Bad_Name" is not a valid RFC 1123 label/),
      'IP address: "198.18.0.300" is not an IPv4 or IPv6 address',
    ]);
    expect(await rows.locator('tr.invalid').count()).toBe(1);
    await page.getByRole('button', { name: 'Add all rows' }).click();
    await page.getByText('Nothing was added: fix the rows marked below').waitFor();
    expect(((await world.gql<{ nodes: unknown[] }>('query($c: ID!) { nodes(clusterId: $c) { id } }', { c: world.clusterId })).data?.nodes ?? []).length).toBe(0);

    // The password was dropped with that send; give it again and add the three valid rows.
    // Each host's status change as the API publishes it, and as the batch page shows it: the
    // add-time check (ADDING → READY_TO_INSTALL, or UNREACHABLE for the cut host) reaches the page
    // within 2 s, without a reload.
    const changes = nodeStatusChanges(world.api.url, world.token, world.clusterId);
    const settled = changes.untilAllLeftAdding(hosts.map((host) => host.hostname), 60_000);
    await page.evaluate(RECORD_BATCH_STATUS_ROWS);
    await page.getByLabel(/^Password \(for every host\)/).fill(hosts[0].password);
    await page.getByRole('button', { name: 'Add the valid rows' }).click();
    await page.getByRole('heading', { name: 'Batch of 3 hosts', level: 1 }).waitFor();
    await settled.finally(() => changes.close());
    const lags = await batchPageLags(page, changes.seen());
    expect(lags.length).toBeGreaterThan(0);
    for (const change of lags) {
      expect(change.lagMs, `${change.hostname} ${change.status} on the page after the API`).toBeLessThanOrEqual(2000);
    }
    expect(await page.locator(`tr[data-host="${hosts[0].hostname}"] [data-testid="host-status"]`).textContent()).toBe('Ready to install');
    expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/clusters/${world.clusterId}/nodes/batches/[0-9a-f-]{36}$`));
    expect(await page.evaluate(`(${KEEPS_SECRET})(${JSON.stringify(hosts[0].password)})`)).toBe(false);
    await screenshot(page, SCREENSHOTS, 'batch-added-en');
  }, 120_000);

  it('installs the batch with live progress: two join, the unreachable one fails with its reason; retry failed after the fault is lifted joins it', async () => {
    const { hosts } = world.lab;
    const state = page.getByTestId('batch-state');
    const batchQueries = () => record.graphqlOperations.filter((name) => name === 'Batch').length;
    const queriesBefore = batchQueries();
    await page.getByRole('button', { name: 'Install batch' }).click();
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 240_000 }).toBe('NEEDS_ATTENTION');
    await page.getByText('Live', { exact: true }).waitFor();
    expect(await page.locator('[data-count="joined"] strong').textContent()).toBe('2');
    expect(await page.locator('[data-count="failed"] strong').textContent()).toBe('1');
    expect(await page.getByTestId('batch-failures').textContent()).toMatch(new RegExp(`${hosts[2].hostname}: Cannot reach SSH`));
    expect(await page.locator(`tr[data-host="${hosts[2].hostname}"]`).getAttribute('data-phase')).toBe('FAILED');
    // Kept current by the subscription, not by re-reading the batch.
    expect(batchQueries() - queriesBefore).toBeLessThanOrEqual(1);
    await screenshot(page, SCREENSHOTS, 'batch-failed-en');

    await world.lab.faults.restoreLink(hosts[2].id);
    await page.getByRole('button', { name: 'Retry failed' }).click();
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 240_000 }).toBe('FINISHED');
    expect(await page.locator('[data-count="joined"] strong').textContent()).toBe('3');
    expect(await page.locator('tr[data-phase="JOINED"]').count()).toBe(3);
    expect(record.pageErrors).toEqual([]);
  }, 600_000);

  it('shows the batch page in Chinese', async () => {
    await page.evaluate(`localStorage.setItem('ccos.language', 'zh')`);
    await page.reload();
    await page.getByRole('heading', { name: '3 台主机的批次', level: 1 }).waitFor();
    expect(await page.getByTestId('batch-state').textContent()).toBe('已完成');
    expect(await page.locator('[data-count="joined"]').textContent()).toContain('已加入');
    // Statuses by their labels, never the raw enum.
    expect(await page.getByTestId('host-status').allTextContents()).toEqual(['已加入', '已加入', '已加入']);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes/bulk`);
    await page.getByRole('heading', { name: '批量录入节点', level: 1 }).waitFor();
    await screenshot(page, SCREENSHOTS, 'bulk-zh');
  }, 60_000);
});
