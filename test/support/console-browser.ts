import { mkdir } from 'node:fs/promises';
import { type Browser, type Locator, type Page, type Request, chromium } from 'playwright-core';
import { expect } from 'vitest';
import { E2E_ADMIN_PASSWORD } from './api-process';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Debian's Chromium, headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/**
 * What a page did that a test checks afterwards: uncaught errors, what the service's
 * Content-Security-Policy refused, and the GraphQL operations it sent over HTTP.
 * With `observe`, every GraphQL request body and response text is handed on (to `ApiProcess.observe`).
 */
export interface PageRecord {
  readonly pageErrors: string[];
  readonly policyViolations: string[];
  readonly graphqlOperations: string[];
  /** The `data` of every subscription message the page received over its WebSocket, in order. */
  readonly subscriptionData: Array<Record<string, unknown>>;
}

export function recordPage(page: Page, observe?: (requestBody: string, responseText: string) => void): PageRecord {
  const record: PageRecord = { pageErrors: [], policyViolations: [], graphqlOperations: [], subscriptionData: [] };
  page.on('pageerror', (error) => record.pageErrors.push(error.message));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) {
      record.policyViolations.push(message.text());
    }
  });
  page.on('request', (request) => {
    const name = operationName(request);
    if (name) {
      record.graphqlOperations.push(name);
    }
  });
  page.on('websocket', (socket) =>
    socket.on('framereceived', ({ payload }) => {
      const message = parseJson(String(payload)) as { type?: string; payload?: { data?: Record<string, unknown> } } | null;
      if (message?.type === 'next' && message.payload?.data) {
        record.subscriptionData.push(message.payload.data);
      }
    }),
  );
  if (observe) {
    // What the console sends and gets back, for the API process's check that no secret comes back.
    page.on('response', (response) => {
      const request = response.request();
      if (request.method() === 'POST' && request.url().endsWith('/graphql')) {
        response.text().then(
          (text) => observe(request.postData() ?? '', text),
          () => undefined,
        );
      }
    });
  }
  return record;
}

/** The window a console page opens in and how long each action may take (default 1366×900, 15 s). */
export interface ConsolePageOptions {
  readonly viewport?: { readonly width: number; readonly height: number };
  readonly actionTimeoutMs?: number;
}

/** A page as the console tests use it: a desktop window, English, 15 s per action, its requests recorded. */
export async function openConsolePage(
  browser: Browser,
  observe?: (requestBody: string, responseText: string) => void,
  options: ConsolePageOptions = {},
): Promise<{ page: Page; record: PageRecord }> {
  // As a user who asked for reduced motion: the console then runs no endless animation (the live
  // dot, spinners), which headless Chromium would otherwise redraw in software 60 times a second.
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1366, height: 900 }, locale: 'en-US', reducedMotion: 'reduce' });
  context.setDefaultTimeout(options.actionTimeoutMs ?? 15_000);
  const page = await context.newPage();
  return { page, record: recordPage(page, observe) };
}

/** Signs in to the console at `baseUrl` as the tests' admin, through the sign-in page, and waits for the clusters. */
export async function signInAsAdmin(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/sign-in`);
  await page.getByRole('textbox', { name: 'User name' }).fill('admin');
  await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
}

const SCREENSHOT_TIMEOUT_MS = 60_000;

/**
 * Keeps a picture of the page in `folder` (under tmp/, not committed) and says where. A full-page
 * picture with CJK glyphs is software-rendered: with both cores busy it took longer than the 15 s
 * an action gets (a CI run at load 8–9), though the page had already shown what the test asserted.
 */
export async function screenshot(page: Page, folder: string, name: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = `${folder}/${name.replace(/[^\w-]+/g, '_')}.png`;
  await page.screenshot({ path: file, fullPage: true, timeout: SCREENSHOT_TIMEOUT_MS });
  return file;
}

/** The text a screen reader reads as the control's description (its hint and error, via aria-describedby). */
export async function descriptionOf(control: Locator): Promise<string> {
  return control.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((id: string) => element.ownerDocument.getElementById(id)?.textContent?.trim() ?? '')
      .join(' '),
  );
}

function operationName(request: Request): string | null {
  if (request.method() !== 'POST' || !request.url().endsWith('/graphql')) {
    return null;
  }
  return (parseJson(request.postData() ?? '{}') as { operationName?: string } | null)?.operationName ?? null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A host's status change, as the API published it or as the batch page showed it (epoch ms, this machine's clock). */
export interface StatusSeen {
  readonly hostname: string;
  readonly status: string;
  readonly at: number;
}

/** Browser side: notes in `window.__statusRows` when each host row of the batch table first shows each status. */
export const RECORD_BATCH_STATUS_ROWS = `(() => {
  const seen = (window.__statusRows = []);
  const keys = new Set();
  const look = () => {
    for (const row of document.querySelectorAll('[data-testid="batch-hosts"] tr[data-host]')) {
      const status = row.querySelector('[data-testid="host-status"]')?.getAttribute('data-status');
      const key = row.getAttribute('data-host') + ' ' + status;
      if (status && !keys.has(key)) {
        keys.add(key);
        seen.push({ hostname: row.getAttribute('data-host'), status, at: Date.now() });
      }
    }
  };
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
})()`;

/**
 * How long after the API published them the batch page (recording since {@link RECORD_BATCH_STATUS_ROWS})
 * showed the status changes it could not have had from its first drawing of the batch: waits until
 * it shows every one (at most 10 s), and returns each change with its lag in milliseconds.
 */
export async function batchPageLags(page: Page, apiSeen: readonly StatusSeen[]): Promise<Array<StatusSeen & { readonly lagMs: number }>> {
  const pageSeen = () => page.evaluate('window.__statusRows') as Promise<StatusSeen[]>;
  const firstDrawn = (await pageSeen())[0]?.at ?? 0;
  const later = apiSeen.filter((seen) => seen.at > firstDrawn && seen.status !== 'ADDING');
  const shownFor = (shown: readonly StatusSeen[], change: StatusSeen) => shown.find((seen) => seen.hostname === change.hostname && seen.status === change.status);
  await expect
    .poll(async () => {
      const shown = await pageSeen();
      return later.filter((change) => !shownFor(shown, change)).map((change) => `${change.hostname} ${change.status}`);
    }, { timeout: 10_000 })
    .toEqual([]);
  const shown = await pageSeen();
  return later.map((change) => ({ ...change, lagMs: (shownFor(shown, change)?.at ?? Number.NaN) - change.at }));
}
