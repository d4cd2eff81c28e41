import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, E2E_ADMIN_PASSWORD, startApiProcess } from '../support/api-process';
import { launchChromium, recordPage } from '../support/console-browser';

/**
 * The console warns on every page while the service lets install agents use plain HTTP
 * (AGENT_PLAIN_HTTP=allow), in English and Chinese, and says nothing when it does not.
 */
describe('console: the plain-HTTP warning', () => {
  let browser: Browser;
  let allowing: ApiProcess;
  let refusing: ApiProcess;

  beforeAll(async () => {
    [browser, allowing, refusing] = await Promise.all([launchChromium(), startApiProcess({ env: { AGENT_PLAIN_HTTP: 'allow' } }), startApiProcess()]);
  });
  afterAll(async () => {
    await browser?.close();
    await allowing?.stop();
    await refusing?.stop();
  });

  const signIn = async (api: ApiProcess): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const record = recordPage(page);
    await page.goto(api.url);
    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
    const settings = page.waitForResponse((response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes('"operationName":"AgentChannel"'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    await settings;
    expect(record.pageErrors).toEqual([]);
    return page;
  };

  it('shows the warning on every page while plain HTTP is allowed, in English and in Chinese', async () => {
    const page = await signIn(allowing);
    const banner = page.getByRole('alert').filter({ hasText: 'Install agents may use plain HTTP.' });
    await banner.waitFor();
    expect(await banner.textContent()).toContain('AGENT_PLAIN_HTTP=allow');
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    expect(await banner.isVisible()).toBe(true);

    await page.getByRole('button', { name: '简体中文' }).click();
    const chinese = page.getByRole('alert').filter({ hasText: '安装代理可以使用明文 HTTP。' });
    await chinese.waitFor();
    expect(await chinese.textContent()).toContain('AGENT_PLAIN_HTTP=allow');
    await page.context().close();
  });

  it('shows no warning when agents must use HTTPS', async () => {
    const page = await signIn(refusing);
    expect(await page.getByTestId('plain-http-warning').count()).toBe(0);
    await page.context().close();
  });
});
