import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, startApiProcess } from './api-process';
import { type ConsolePageOptions, type PageRecord, launchChromium, openConsolePage, screenshot } from './console-browser';

/** What a console test's world needs to offer: the API process the console is served by, and its end. */
export interface ConsoleWorldParts {
  readonly api: ApiProcess;
  stop(): Promise<void>;
}

export interface ConsoleWorldOptions<W extends ConsoleWorldParts> {
  /** Starts the world (while Chromium starts): {@link startApiAndKubeSim} or `startScaleOutWorld`. */
  start(): Promise<W>;
  /** Where a failed test's screenshot goes (under tmp/, not committed). */
  readonly screenshots: string;
  /** How long starting may take (the lab may wait for the machine-wide lab lock). Default: the e2e project's hook timeout. */
  readonly startTimeoutMs?: number;
  readonly page?: ConsolePageOptions;
  /** Said after a failure, below the screenshot's path and the API log's tail. */
  describeFailure?(): string;
}

/** The world, Chromium and the one page a file's tests share, in order; set before the file's own `beforeAll` runs. */
export interface ConsoleWorld<W> {
  world: W;
  browser: Browser;
  page: Page;
  /** The page's uncaught errors and GraphQL operations. */
  record: PageRecord;
  /** The console's address, `http://127.0.0.1:<port>`. */
  baseUrl: string;
}

/**
 * Sets up what every console test file shares, once per file: the world and Chromium started
 * together, one page whose GraphQL traffic the API process checks for secrets, a screenshot and
 * the API log's tail after a failed test, and everything stopped afterwards. Call it inside the
 * file's `describe`; hooks the file registers after it run after its `beforeAll` and before its
 * `afterAll` (vitest's stacked hooks).
 */
export function useConsoleWorld<W extends ConsoleWorldParts>(options: ConsoleWorldOptions<W>): ConsoleWorld<W> {
  const shared = {} as ConsoleWorld<W>;
  let world: W | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    const started = await Promise.allSettled([options.start(), launchChromium()]);
    world = started[0].status === 'fulfilled' ? started[0].value : undefined;
    browser = started[1].status === 'fulfilled' ? started[1].value : undefined;
    for (const outcome of started) {
      if (outcome.status === 'rejected') {
        throw outcome.reason;
      }
    }
    if (!world || !browser) {
      throw new Error('unreachable: both started');
    }
    const { page, record } = await openConsolePage(browser, world.api.observe, options.page);
    Object.assign(shared, { world, browser, page, record, baseUrl: `http://127.0.0.1:${world.api.port}` });
  }, options.startTimeoutMs);

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && shared.page) {
      const file = await screenshot(shared.page, options.screenshots, `failed-${context.task.name}`).catch(() => 'none');
      const more = options.describeFailure?.() ?? '';
      console.error(`screenshot of the failure: ${file}${more ? `\n${more}` : ''}\nAPI log tail:\n${world?.api.output().slice(-3000)}`);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await world?.stop();
  });

  return shared;
}

/** The smaller world: the built API process and kube-sim seeded with the shipped RBAC, no lab hosts. */
export interface ApiAndKubeSim extends ConsoleWorldParts {
  readonly sim: KubeSim;
}

export async function startApiAndKubeSim(): Promise<ApiAndKubeSim> {
  const [api, sim] = await Promise.allSettled([startApiProcess(), startKubeSim({ seed: SHIPPED_RBAC })]);
  if (api.status === 'rejected' || sim.status === 'rejected') {
    await (api.status === 'fulfilled' ? api.value.stop() : undefined)?.catch(() => undefined);
    await (sim.status === 'fulfilled' ? sim.value.stop() : undefined)?.catch(() => undefined);
    throw api.status === 'rejected' ? api.reason : (sim as PromiseRejectedResult).reason;
  }
  return {
    api: api.value,
    sim: sim.value,
    stop: async () => {
      try {
        await api.value.stop();
      } finally {
        await sim.value.stop();
      }
    },
  };
}
