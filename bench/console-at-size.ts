/**
 * The console at size, in Chromium (Debian's, headless, through playwright-core) against the
 * built API and console: one kube-sim cluster of 5,000 Nodes and one of 50, both registered and
 * fully discovered. For each, the time from navigation to the cluster's node page until its
 * first node row is shown, and how many node rows are in the DOM then and after the list
 * settles (a long list renders only its visible rows), and the time a status filter takes to
 * bring the table back as it was; the 50-node page is the reference. The page's own `nodes`
 * query over HTTP, 5,000 nodes beside 50 (the server's share of the first row). And the
 * JavaScript the sign-in page transfers
 * (as served: compressed if the server compresses), beside the same scripts gzip-compressed
 * here (level 6), what a compressing server would send.
 *
 *   npx tsx bench/console-at-size.ts [nodes=5000] [referenceNodes=50]
 *
 * Build first: `npx nx run-many -t build -p api console`.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { print } from 'graphql';
import { type Browser, type Page, type Response, chromium } from 'playwright-core';
import { NodeListDocument } from '@ccos/shared/api-schema';
import { type ApiWorld, BENCH_ADMIN_PASSWORD, startApiWorld } from './support/api-world';
import { type BenchOptions, type Figure, RowUnavailable, isMain } from './support/row';
import { startSimCluster } from './support/sim-cluster';

const CHROMIUM = '/usr/bin/chromium';
const CONSOLE_INDEX = 'dist/apps/console/browser/index.html';
const ROW = 'tr[data-node]';

export interface ConsoleFigures {
  readonly firstRowMs: number;
  readonly referenceFirstRowMs: number;
  readonly rows: number;
  readonly referenceRows: number;
  readonly filterMs: number;
  readonly referenceFilterMs: number;
  readonly queryMs: number;
  readonly referenceQueryMs: number;
  readonly queryBytes: number;
  readonly signInJsTransferred: number;
  readonly signInJsGzip: number;
  readonly signInJsRaw: number;
  readonly discoveryMs: number;
  readonly referenceDiscoveryMs: number;
}

/** The row of `npm run bench`. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const [nodes, referenceNodes] = options.smoke ? [20, 5] : [5000, 50];
  const result = await measureConsole(nodes, referenceNodes, options.log);
  return [
    {
      name: `navigation → first node row, ${nodes} nodes`,
      value: result.firstRowMs,
      unit: 'ms',
      reference: { name: `same page, ${referenceNodes} nodes`, value: result.referenceFirstRowMs, measured: true },
      better: 'lower',
      goal: { on: 'value', atMost: 1000, text: '≤ 1 s' },
    },
    {
      name: `status filter → the table back (all ${nodes} nodes)`,
      value: result.filterMs,
      unit: 'ms',
      reference: { name: `same page, ${referenceNodes} nodes`, value: result.referenceFilterMs, measured: true },
      better: 'lower',
    },
    {
      name: `the console's nodes query through the API, ${nodes} nodes`,
      value: result.queryMs,
      unit: 'ms',
      reference: { name: `same query, ${referenceNodes} nodes`, value: result.referenceQueryMs, measured: true },
      better: 'lower',
      note: `${(result.queryBytes / 1e6).toFixed(1)} MB of JSON`,
    },
    {
      name: `node rows in the DOM, ${nodes} nodes`,
      value: result.rows,
      unit: 'rows',
      reference: { name: `same page, ${referenceNodes} nodes`, value: result.referenceRows, measured: true },
      better: 'lower',
    },
    {
      name: `registerCluster → every Node in the inventory, ${nodes} nodes`,
      value: result.discoveryMs,
      unit: 'ms',
      reference: { name: `same, ${referenceNodes} nodes`, value: result.referenceDiscoveryMs, measured: true },
      better: 'lower',
      goal: { on: 'value', atMost: 5000, text: '≤ 5 s' },
    },
    {
      name: 'sign-in page JavaScript transferred',
      value: result.signInJsTransferred / 1000,
      unit: 'kB',
      reference: { name: 'the same scripts gzip -6', value: result.signInJsGzip / 1000, measured: true },
      better: 'lower',
      goal: { on: 'value', atMost: 400, text: '≤ 400 kB' },
      note: `${(result.signInJsRaw / 1000).toFixed(0)} kB uncompressed`,
    },
  ];
}

/** The scripts a fresh page load fetches: bytes on the wire (body as transferred), and the decoded bodies. */
async function scriptsOf(page: Page, url: string): Promise<{ transferred: number; bodies: Buffer[] }> {
  const pending: Array<Promise<{ transferred: number; body: Buffer }>> = [];
  const onResponse = (response: Response) => {
    if (response.request().resourceType() === 'script') {
      pending.push(Promise.all([response.request().sizes(), response.body()]).then(([sizes, body]) => ({ transferred: sizes.responseBodySize, body })));
    }
  };
  page.on('response', onResponse);
  await page.goto(url, { waitUntil: 'networkidle' });
  page.off('response', onResponse);
  const scripts = await Promise.all(pending);
  return { transferred: scripts.reduce((sum, script) => sum + script.transferred, 0), bodies: scripts.map((script) => script.body) };
}

/** Navigation until the first node row is visible, and until the whole list is in (the first page comes before it); the rows in the DOM once their count stops changing. */
async function openNodeList(page: Page, url: string, expected: number): Promise<{ firstRowMs: number; wholeListMs: number; rows: number }> {
  const started = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator(ROW).first().waitFor({ state: 'visible', timeout: 120_000 });
  const firstRowMs = performance.now() - started;
  // The first page comes before the whole list: wait for it, then until the rows stop changing.
  await page.locator('[role="status"][data-complete="true"]').waitFor({ timeout: 120_000 });
  const wholeListMs = performance.now() - started;
  let rows = await page.locator(ROW).count();
  for (let stable = 0; stable < 3 && rows < expected; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await page.locator(ROW).count();
    stable = now === rows ? stable + 1 : 0;
    rows = now;
  }
  return { firstRowMs, wholeListMs, rows };
}

/**
 * On the open node list: filters to a family no node is in (the list empties), then back to all,
 * timed from choosing "all" until every row is back.
 */
async function filterRoundTrip(page: Page, expected: number): Promise<number> {
  const select = page.locator('#node-status-filter');
  await select.selectOption('attention');
  await page.locator(ROW).first().waitFor({ state: 'detached', timeout: 120_000 });
  const started = performance.now();
  await select.selectOption('all');
  // A function, not a string: the console's CSP forbids eval, which a string predicate needs once
  // it polls (a busy machine). This Node-side file has no DOM types, hence the narrow view of it.
  await page.waitForFunction(
    ([selector, count]) => (globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } }).document.querySelectorAll(selector).length >= count,
    [ROW, expected] as const,
    { timeout: 120_000, polling: 'raf' },
  );
  return performance.now() - started;
}

/** The node page's own query (NodeList, the console's row fields), over HTTP as the console sends it: the median of 3, and the response's size. */
async function timeNodesQuery(world: ApiWorld, clusterId: string): Promise<{ ms: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = performance.now();
    const response = await fetch(`${world.api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.token}`, 'accept-encoding': 'gzip' },
      body: JSON.stringify({ query: print(NodeListDocument), variables: { clusterId } }),
    });
    const text = await response.text();
    times.push(performance.now() - started);
    bytes = Buffer.byteLength(text);
  }
  times.sort((a, b) => a - b);
  return { ms: times[1] ?? Number.NaN, bytes };
}

export async function measureConsole(nodes: number, referenceNodes: number, log: (line: string) => void): Promise<ConsoleFigures> {
  if (!existsSync(CHROMIUM)) {
    throw new RowUnavailable(`Chromium missing (${CHROMIUM})`);
  }
  if (!existsSync(CONSOLE_INDEX)) {
    throw new RowUnavailable('the console is not built (npx nx run console:build)');
  }
  const world = await startApiWorld();
  let browser: Browser | undefined;
  const clusters: Array<{ stop: () => Promise<void> }> = [];
  try {
    const large = await startSimCluster(world, nodes, log);
    clusters.push(large);
    const small = await startSimCluster(world, referenceNodes, log);
    clusters.push(small);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'en-US' });
    const page = await context.newPage();

    // A fresh context: nothing cached, so this is what a first visit transfers.
    const signIn = await scriptsOf(page, `${world.api.url}/sign-in`);
    const raw = signIn.bodies.reduce((sum, body) => sum + body.length, 0);
    const gzip = signIn.bodies.reduce((sum, body) => sum + gzipSync(body, { level: 6 }).length, 0);
    log(`sign-in page: ${signIn.bodies.length} scripts, ${(signIn.transferred / 1000).toFixed(0)} kB transferred, ${(raw / 1000).toFixed(0)} kB decoded, ${(gzip / 1000).toFixed(0)} kB gzip -6`);

    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill(BENCH_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor({ timeout: 60_000 });

    const query = await timeNodesQuery(world, large.clusterId);
    const referenceQuery = await timeNodesQuery(world, small.clusterId);
    log(`nodes query: ${nodes} nodes ${query.ms.toFixed(0)} ms (${(query.bytes / 1e6).toFixed(1)} MB), ${referenceNodes} nodes ${referenceQuery.ms.toFixed(0)} ms`);

    const listUrl = (clusterId: string) => `${world.api.url}/clusters/${clusterId}/nodes`;
    // Once unmeasured, so both measured loads find the scripts in the cache alike.
    await openNodeList(page, listUrl(small.clusterId), referenceNodes);
    const big = await openNodeList(page, listUrl(large.clusterId), nodes);
    const filterMs = await filterRoundTrip(page, big.rows);
    const reference = await openNodeList(page, listUrl(small.clusterId), referenceNodes);
    const referenceFilterMs = await filterRoundTrip(page, reference.rows);
    log(
      `node page: ${nodes} nodes first row ${big.firstRowMs.toFixed(0)} ms, whole list ${big.wholeListMs.toFixed(0)} ms, ${big.rows} rows in the DOM, filter back to all ${filterMs.toFixed(0)} ms; ` +
        `${referenceNodes} nodes ${reference.firstRowMs.toFixed(0)} ms, whole list ${reference.wholeListMs.toFixed(0)} ms, ${reference.rows} rows, filter ${referenceFilterMs.toFixed(0)} ms`,
    );
    return {
      firstRowMs: big.firstRowMs,
      referenceFirstRowMs: reference.firstRowMs,
      rows: big.rows,
      referenceRows: reference.rows,
      filterMs,
      referenceFilterMs,
      queryMs: query.ms,
      referenceQueryMs: referenceQuery.ms,
      queryBytes: query.bytes,
      signInJsTransferred: signIn.transferred,
      signInJsGzip: gzip,
      signInJsRaw: raw,
      discoveryMs: large.discoveryMs,
      referenceDiscoveryMs: small.discoveryMs,
    };
  } finally {
    await browser?.close();
    for (const cluster of clusters) {
      await cluster.stop();
    }
    await world.stop();
  }
}

if (isMain(import.meta.url)) {
  await measureConsole(Number(process.argv[2] ?? 5000), Number(process.argv[3] ?? 50), (line) => console.log(line));
}
