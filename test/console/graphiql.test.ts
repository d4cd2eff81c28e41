import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E2E_ADMIN_PASSWORD } from '../support/api-process';
import { launchChromium, recordPage, screenshot } from '../support/console-browser';
import { type ScaleOutWorld, approveUntilSettled, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The GraphQL IDE the service serves at GET /graphql, in Chromium with every request to another
 * host refused and counted (HTTP through route interception, WebSockets through
 * routeWebSocket): the page loads from the service alone, signs in with the login mutation,
 * runs a query, and shows installProgress arriving live over graphql-ws while a lab host
 * installs. Needs `npx nx run-many -t build -p api graphiql boot-worker`.
 */
const SCREENSHOTS = 'tmp/graphiql-e2e';

let world: ScaleOutWorld;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let baseUrl = '';
const foreign: string[] = [];
/** What the IDE's Content-Security-Policy refused: a foreign load it stops never reaches the routes above. */
const policyViolations: string[] = [];
const sameOrigin: string[] = [];
const framesSent: string[] = [];
const framesReceived: string[] = [];

/** The text of GraphiQL's response pane (Monaco renders the visible lines). */
const responseText = () => page.locator('.graphiql-response').innerText();

/** Replaces the query editor's content, as a user pasting it (typing would trigger auto-closing brackets). */
async function pasteQuery(text: string): Promise<void> {
  // A string, as this Node-side file has no DOM types.
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(text)})`);
  await page.locator('.graphiql-query-editor .monaco-editor').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+V');
  await expect.poll(async () => (await page.locator('.graphiql-query-editor').innerText()).replace(/\s+/g, ' ')).toContain(text.split('\n')[0]);
}

describe('GraphiQL at /graphql, offline', () => {
  beforeAll(async () => {
    [world, browser] = await Promise.all([startScaleOutWorld({ hosts: 1, name: 'graphiql-test' }), launchChromium()]);
    baseUrl = `http://127.0.0.1:${world.api.port}`;
    const origin = new URL(baseUrl);
    context = await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'en-US' });
    context.setDefaultTimeout(20_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.host === origin.host && url.protocol === origin.protocol) {
        sameOrigin.push(url.pathname);
        return route.continue();
      }
      foreign.push(url.href);
      return route.abort('blockedbyclient');
    });
    await context.routeWebSocket(/.*/, (socket) => {
      const url = new URL(socket.url());
      if (url.host !== origin.host || url.protocol !== 'ws:') {
        foreign.push(url.href);
        return socket.close();
      }
      const server = socket.connectToServer();
      socket.onMessage((message) => {
        framesSent.push(String(message));
        server.send(message);
      });
      server.onMessage((message) => {
        framesReceived.push(String(message));
        socket.send(message);
      });
    });
    context.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) {
        policyViolations.push(message.text());
      }
    });
    page = await context.newPage();
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await world?.stop();
  }, 120_000);

  it('serves the IDE to browsers and nothing of Apollo’s landing page; scripts still get GraphQL, introspection only when signed in', async () => {
    const html = await fetch(`${baseUrl}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(html.status).toBe(200);
    const page = await html.text();
    expect(page).toContain('/graphql/ide/graphiql.js');
    expect(page).not.toMatch(/apollographql|cdn\.|https?:\/\//);
    expect(html.headers.get('content-security-policy')).toContain("connect-src 'self'");

    const asScript = await fetch(`${baseUrl}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json', 'apollo-require-preflight': 'true' } });
    expect(await asScript.json()).toEqual({ data: { __typename: 'Query' } });
    const anonymous = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('loads from the service alone, signs in with the login mutation and runs a query', async () => {
    const record = recordPage(page, world.api.observe);
    await page.goto(`${baseUrl}/graphql`);
    // The bar speaks the console's languages, and remembers the choice as the console does.
    await page.getByRole('button', { name: '中文' }).click();
    await expect.poll(() => page.locator('.ide-bar').innerText()).toContain('登录后可加载接口结构并执行操作');
    await screenshot(page, SCREENSHOTS, 'sign-in-zh');
    expect(await page.evaluate('localStorage.getItem("ccos.language")')).toBe('zh');
    await page.getByRole('button', { name: 'English' }).click();
    await page.locator('input[name=password]').fill(E2E_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('signed-in').textContent()).toContain('Signed in as admin');
    // The schema came by introspection with the token: the docs explorer lists the root types.
    await page.getByRole('button', { name: /Show Documentation Explorer/i }).click();
    await expect.poll(() => page.locator('.graphiql-doc-explorer').innerText()).toContain('Subscription');

    // The first saved example is the Clusters query.
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(responseText, { timeout: 20_000 }).toContain(world.clusterId);
    expect(record.graphqlOperations).toEqual(expect.arrayContaining(['Login', 'IntrospectionQuery', 'Clusters']));
    // Monaco's three workers came from the service too.
    expect(sameOrigin).toEqual(expect.arrayContaining(['/graphql/ide/graphiql.js', '/graphql/ide/editor.worker.js', '/graphql/ide/graphql.worker.js']));
    expect(record.pageErrors).toEqual([]);
    expect(foreign).toEqual([]);
    expect(policyViolations).toEqual([]);
    await screenshot(page, SCREENSHOTS, 'signed-in-query');
  });

  it('shows installProgress events arriving live over graphql-ws while a lab host installs', async () => {
    const nodeId = await world.addHost(0);
    await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
    await page.locator('.graphiql-tab-add').click();
    await pasteQuery(`subscription Watch {
  installProgress(nodeId: "${nodeId}") {
    run { status steps { step status } }
    events { seq step status message }
  }
}`);
    // The socket opens with the session's token in connection_init, and the subscription starts.
    const subscribed = () => framesSent.some((frame) => frame.includes('"subscribe"') && frame.includes(nodeId));
    const execute = page.locator('.graphiql-execute-button');
    await execute.click();
    // The editor hands a paste to GraphiQL's state a moment later; a Run pressed before that runs
    // nothing and the button stays "Execute": press it again, as a user would.
    for (let attempt = 0; attempt < 3 && !subscribed(); attempt += 1) {
      await expect.poll(subscribed, { timeout: 5_000 }).toBe(true).catch(() => undefined);
      if (!subscribed() && /^Execute/i.test((await execute.getAttribute('aria-label')) ?? '')) {
        await execute.click();
      }
    }
    await expect.poll(subscribed, { timeout: 5_000 }).toBe(true);
    const init = JSON.parse(framesSent.find((frame) => frame.includes('connection_init')) ?? '{}') as { payload?: { authorization?: string } };
    expect(init.payload?.authorization).toMatch(/^Bearer \S+$/);

    const shown = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const text = await responseText().catch(() => '');
        if (text.includes('installProgress')) {
          shown.add(text);
        }
        await new Promise((wake) => setTimeout(wake, 150));
      }
    })();
    const installed = await world.gql<{ installNode: { status: string } }>('mutation($id: ID!) { installNode(nodeId: $id) { status } }', { id: nodeId });
    expect(installed.data?.installNode.status).toBe('RUNNING');
    const { statuses } = await approveUntilSettled(world, [nodeId], ['JOINED', 'INSTALL_FAILED', 'STALLED'], 300_000);
    expect(statuses[nodeId]).toBe('JOINED');
    await expect.poll(responseText, { timeout: 30_000 }).toContain('SUCCEEDED');
    watching = false;
    await watch;
    await screenshot(page, SCREENSHOTS, 'install-progress');

    // Many events came in payloads one after the other while the run was RUNNING, and the pane showed them as they came.
    const payloads = framesReceived.filter((frame) => frame.includes('"next"') && frame.includes('installProgress'));
    const seqs = new Set(
      payloads.flatMap((frame) => (JSON.parse(frame) as { payload: { data: { installProgress: { events: Array<{ seq: number }> } } } }).payload.data.installProgress.events.map((event) => event.seq)),
    );
    expect(payloads.length).toBeGreaterThan(5);
    expect(seqs.size).toBeGreaterThan(5);
    expect(shown.size).toBeGreaterThan(2);
    expect([...shown].some((text) => text.includes('RUNNING'))).toBe(true);
    expect(foreign).toEqual([]);
    expect(policyViolations).toEqual([]);
  }, 600_000);

  it('would have seen a request to another host: the page’s policy stops and reports it, and the interception catches HTTP and WebSocket alike', async () => {
    expect(foreign).toEqual([]);
    expect(policyViolations).toEqual([]);
    // Strings, as this Node-side file has no DOM types; 198.51.100.0/24 is documentation space.
    const probe = "fetch('http://198.51.100.7/probe').then(() => 'sent', () => 'blocked')";
    // The IDE's Content-Security-Policy (connect-src 'self') refuses it before it reaches the network.
    expect(await page.evaluate(probe)).toBe('blocked');
    expect(foreign).toEqual([]);
    await expect.poll(() => policyViolations.some((text) => text.includes('198.51.100.7'))).toBe(true);
    // A page without that policy, in the same context: the route interception sees and aborts both.
    const blank = await context.newPage();
    expect(await blank.evaluate(probe)).toBe('blocked');
    await blank.evaluate("new WebSocket('ws://198.51.100.7/socket')");
    await expect.poll(() => [...foreign].sort()).toEqual(['http://198.51.100.7/probe', 'ws://198.51.100.7/socket']);
  });
});
