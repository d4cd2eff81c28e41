import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import type { KubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, E2E_ADMIN_PASSWORD } from '../support/api-process';
import type { PageRecord } from '../support/console-browser';
import { startApiAndKubeSim, useConsoleWorld } from '../support/console-world';

/**
 * An automated accessibility check of the console's pages with axe-core (Deque's rules engine,
 * run inside Chromium against the rendered page): WCAG 2.1 A and AA rules on every main page, in
 * English and in Chinese, with data on them (discovered nodes, a pending CSR, an audit trail) and
 * a form showing its errors. A page passes with no violation at all; each failure names the rule,
 * its help text and the elements. Needs `npx nx run-many -t build -p api console`.
 */
const SCREENSHOTS = 'tmp/console-a11y-e2e';
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[]; readonly failureSummary?: string }[];
}

let api: ApiProcess;
let sim: KubeSim;
let page: Page;
let record: PageRecord;
let clusterUrl = '';
let nodeUrl = '';
/** Every page checked, with what axe found on it (asserted per test, listed together on failure). */
const checked: string[] = [];

/** Runs axe on the page as it is now; resolves to its WCAG violations, described one per line. */
async function violations(): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const found = (await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} }, resultTypes: ['violations'] }).then((r) => r.violations)`)) as AxeViolation[];
  return found.map((violation) => {
    const where = violation.nodes.slice(0, 4).map((node) => node.target.join(' ')).join(', ') + (violation.nodes.length > 4 ? ` and ${violation.nodes.length - 4} more` : '');
    const why = (violation.nodes[0]?.failureSummary ?? '').replace(/\s+/g, ' ').trim();
    return `${violation.id} (${violation.impact ?? 'n/a'}): ${violation.help} — ${where}${why ? ` — ${why}` : ''}`;
  });
}

async function expectAccessible(name: string): Promise<void> {
  // Fonts and lazy chunks settle before the rules run (contrast is computed from rendered styles).
  await page.evaluate('document.fonts.ready');
  checked.push(name);
  expect(await violations(), `${name} (${page.url()})`).toEqual([]);
}

describe('console: accessibility (axe-core, WCAG 2.1 A/AA)', () => {
  const shared = useConsoleWorld({ start: startApiAndKubeSim, screenshots: SCREENSHOTS, describeFailure: () => `pages checked so far: ${checked.join(', ')}` });
  beforeAll(async () => {
    ({ page, record } = shared);
    ({ api, sim } = shared.world);
    for (const [index, ready] of [[1, 'True'], [2, 'False']] as const) {
      sim.api.seed(sim.resource('nodes'), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: `worker-${index}`, labels: { 'node-role.kubernetes.io/worker': '' } },
        status: { conditions: [{ type: 'Ready', status: ready }], addresses: [{ type: 'InternalIP', address: `10.40.0.${index + 10}` }] },
      });
    }
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:worker-3', organizations: ['system:nodes'] });
    sim.api.seed(sim.resource('certificatesigningrequests'), {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'csr-a11y' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], username: 'system:node:worker-3', groups: ['system:nodes', 'system:authenticated'] },
    });
    const token = await api.login();
    const registered = await api.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'a11y', apiServerUrl: sim.url, vip: '198.18.0.1', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: false } },
      token,
    );
    expect(registered.errors).toBeUndefined();
    const clusterId = registered.data?.registerCluster.id ?? '';
    clusterUrl = `${api.url}/clusters/${clusterId}`;
    for (let deadline = Date.now() + 60_000; ; ) {
      const nodes = (await api.gql<{ nodes: { id: string; hostname: string }[] }>('query($c: ID!) { nodes(clusterId: $c) { id hostname } }', { c: clusterId }, token)).data?.nodes ?? [];
      const first = nodes.find((node) => node.hostname === 'worker-1');
      if (nodes.length >= 2 && first) {
        nodeUrl = `${clusterUrl}/nodes/${first.id}`;
        break;
      }
      if (Date.now() > deadline) {
        throw new Error(`the seeded nodes were not discovered: ${JSON.stringify(nodes)}`);
      }
      await new Promise((wake) => setTimeout(wake, 250));
    }
  }, 180_000);

  it('the sign-in page, also showing a failed sign-in', async () => {
    await page.goto(`${api.url}/sign-in`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await expectAccessible('sign-in');
    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    await expectAccessible('sign-in, failed');
    await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
  });

  it('the cluster list, the cluster page and the register form with its errors', async () => {
    await page.getByRole('link', { name: 'a11y', exact: true }).waitFor();
    await expectAccessible('clusters');
    await page.goto(clusterUrl);
    await page.getByRole('heading', { name: 'a11y', level: 1 }).waitFor();
    // With the readiness checks answered, so that their list is checked too.
    await page.getByTestId('cluster-checks-state').waitFor();
    await expectAccessible('cluster');
    await page.goto(`${api.url}/clusters/new`);
    await page.getByRole('heading', { name: 'Register cluster', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'Master VIP' }).fill('10.0.0.300');
    await page.getByRole('button', { name: 'Register cluster' }).click();
    await page.getByText('Enter an IPv4 or IPv6 address').first().waitFor();
    await expectAccessible('register cluster, with errors');
  });

  it('the node list, a node, and the add forms with their errors', async () => {
    await page.goto(`${clusterUrl}/nodes`);
    await page.locator('tr[data-node]').first().waitFor();
    await expectAccessible('nodes');
    await page.goto(nodeUrl);
    await page.getByRole('heading', { name: 'worker-1', level: 1 }).waitFor();
    await expectAccessible('node');
    await page.goto(`${clusterUrl}/nodes/new`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'IP address' }).fill('300.1.1.1');
    await page.getByRole('textbox', { name: 'IP address' }).blur();
    await page.getByText(/IPv4|IPv6/).first().waitFor();
    await expectAccessible('add node, with an error');
    await page.goto(`${clusterUrl}/nodes/bulk`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await expectAccessible('bulk add');
  });

  it('the certificates page with a pending CSR, the pools page', async () => {
    await page.goto(`${clusterUrl}/csrs`);
    await page.locator('ccos-csr-card[data-csr="csr-a11y"]').waitFor();
    await expectAccessible('certificates');
    await page.goto(`${clusterUrl}/pools`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await expectAccessible('pools');
  });

  it('users, the audit log and the account pages', async () => {
    await page.goto(`${api.url}/users`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await expectAccessible('users');
    await page.goto(`${api.url}/audit`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.locator('table tbody tr').first().waitFor();
    await expectAccessible('audit');
    await page.goto(`${api.url}/account/password`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await expectAccessible('change password');
    await page.goto(`${api.url}/account/sessions`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await expectAccessible('my sessions');
  });

  it('the main pages in Chinese', async () => {
    await page.goto(`${clusterUrl}/nodes`);
    await page.locator('tr[data-node]').first().waitFor();
    await page.getByRole('button', { name: '简体中文' }).click();
    await expect.poll(() => page.evaluate('document.documentElement.lang')).toMatch(/^zh/);
    await expectAccessible('nodes (zh)');
    await page.goto(nodeUrl);
    await page.getByRole('heading', { name: 'worker-1', level: 1 }).waitFor();
    await expectAccessible('node (zh)');
    await page.goto(`${clusterUrl}/csrs`);
    await page.locator('ccos-csr-card[data-csr="csr-a11y"]').waitFor();
    await expectAccessible('certificates (zh)');
  });

  it('raised no uncaught errors in the page', () => {
    expect(record.pageErrors).toEqual([]);
  });
});
