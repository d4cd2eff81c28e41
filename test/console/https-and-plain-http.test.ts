import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, E2E_ADMIN_PASSWORD, startApiProcess } from '../support/api-process';
import { launchChromium, recordPage } from '../support/console-browser';

/**
 * The console on both protocols of the one port: https:// with live updates over wss://,
 * plain http:// as ever; and the warning on every page while the service lets install
 * agents use plain HTTP (AGENT_PLAIN_HTTP=allow), in English and Chinese. On both, the
 * service's Content-Security-Policy refuses nothing the console does.
 */
describe('console: HTTPS, plain HTTP and the plain-HTTP warning', () => {
  let browser: Browser;
  let allowing: ApiProcess;
  let refusing: ApiProcess;
  let sim: KubeSim;
  let clusterId = '';

  beforeAll(async () => {
    [browser, allowing, refusing, sim] = await Promise.all([launchChromium(), startApiProcess({ env: { AGENT_PLAIN_HTTP: 'allow' } }), startApiProcess(), startKubeSim({ seed: SHIPPED_RBAC })]);
    const registered = await refusing.gql<{ registerCluster: { id: string } }>(
      'mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { id } }',
      { input: { name: 'tls', apiServerUrl: sim.url, vip: '127.0.0.1', kubeconfig: shippedIdentityKubeconfig(sim) } },
      await refusing.login(),
    );
    clusterId = registered.data?.registerCluster.id ?? '';
  });
  afterAll(async () => {
    await browser?.close();
    await allowing?.stop();
    await refusing?.stop();
    await sim?.stop();
  });

  const signIn = async (api: ApiProcess, url = api.url): Promise<Page> => {
    // The service's own CA is not in Chromium's store; what matters here is that the same port speaks TLS.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', ignoreHTTPSErrors: true });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const record = recordPage(page);
    const loaded = await page.goto(url);
    expect(loaded?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(loaded?.headers()['x-content-type-options']).toBe('nosniff');
    expect(loaded?.headers()['strict-transport-security']).toBe(url.startsWith('https:') ? 'max-age=31536000' : undefined);
    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
    const settings = page.waitForResponse((response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes('"operationName":"AgentChannel"'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    await settings;
    expect(record.pageErrors).toEqual([]);
    expect(record.policyViolations).toEqual([]);
    // Every stylesheet applies: a build that loads one with an inline onload handler (which the policy refuses) would leave it at media=print.
    expect(await page.evaluate("[...document.querySelectorAll('link[rel=stylesheet]')].map((link) => link.media || 'all')")).toEqual(['all']);
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

  it('serves the console over HTTPS on the same port, with its live updates over wss://', async () => {
    const page = await signIn(refusing, refusing.url.replace('http://', 'https://'));
    expect(new URL(page.url()).protocol).toBe('https:');
    // Listen for the acknowledgement as soon as the socket opens: it may arrive before the page has rendered.
    const acknowledged = page.waitForEvent('websocket').then(async (socket) => {
      await socket.waitForEvent('framereceived', { predicate: (frame) => String(frame.payload).includes('connection_ack') });
      return socket;
    });
    await page.goto(`${refusing.url.replace('http://', 'https://')}/clusters/${clusterId}/nodes`);
    await page.getByRole('heading', { name: 'Nodes of tls', level: 1 }).waitFor();
    // The subscription is acknowledged: graphql-ws answers connection_init over the TLS socket.
    const opened = await acknowledged;
    expect(opened.url()).toBe(`wss://127.0.0.1:${refusing.port}/graphql`);
    await page.context().close();
  });

  it('shows no warning when agents must use HTTPS', async () => {
    const page = await signIn(refusing);
    expect(await page.getByTestId('plain-http-warning').count()).toBe(0);
    await page.context().close();
  });
});
