import { CertificatesV1Api, KubeConfig } from '@kubernetes/client-node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ccos/shared/util-timing/testing';
import { generateCertificateRequest } from '@ccos/tools/kube-sim';
import { launchChromium, screenshot, signInAsAdmin } from '../support/console-browser';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * Day 2 for certificates (issue 19), on a real lab host: the stand-in kubelet asks for serving
 * certificates valid for 10 minutes and rotates them at 70–90 % of their validity. The test moves
 * the host's clock ahead (faults.advanceClock) instead of waiting. A node joined through the
 * service gets its serving certificate renewed twice with no operator, with join auto-approve
 * off, and stays Ready; the API and the metrics show each new expiry. Hostile renewals stay
 * pending with the check named; with renewals off the kubelet's renewal stays pending too.
 * The console's node page shows each new expiry live, and the node list warns. Needs
 * `npx nx run-many -t build -p api console boot-worker`.
 */
const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
/** Past 90 % of a 10-minute certificate (kube-sim backdates 5 minutes: 900 s of validity, 600 s ahead at issue). */
const CLOCK_JUMP_SECONDS = 520;
const SCREENSHOTS = 'tmp/certificate-renewal-e2e';

interface Certificate {
  node: string;
  kind: 'CLIENT' | 'SERVING';
  csrName: string;
  notAfter: string;
  expiringSoon: boolean;
}
interface CsrView {
  name: string;
  status: string;
  requester: { username: string };
  verdict: { path: string; decision: string; reason: string; checks: Array<{ name: string; passed: boolean }> };
  decisions: Array<{ decision: string; actor: string; reason: string }>;
}

const CERTIFICATES = 'query($c: ID!, $n: String) { nodeCertificates(clusterId: $c, node: $n) { certificates { node kind csrName notAfter expiringSoon } pendingRenewals { node csrName reason } } }';
const CSRS = 'query($c: ID!) { csrs(clusterId: $c) { name status requester { username } verdict { path decision reason checks { name passed } } decisions { decision actor reason } } }';

describe('certificate renewal: serving certificates of a node joined here renew without an operator', () => {
  let world: ScaleOutWorld;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    [world, browser] = await Promise.all([
      startScaleOutWorld({ hosts: 1, name: 'certificate-renewal', csrAutoApprove: true, kubelet: { servingCertificateSeconds: 600 } }),
      launchChromium(),
    ]);
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await world?.stop();
  });

  async function signIn(): Promise<void> {
    page = await (await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'en-US' })).newPage();
    await signInAsAdmin(page, `http://127.0.0.1:${world.api.port}`);
  }

  /** The serving certificate's notAfter the node page shows, once it is `expected`. */
  async function pageShowsServingExpiry(expected: string): Promise<void> {
    const shown = page.getByTestId('certificate-SERVING');
    await expect.poll(() => shown.getAttribute('data-not-after'), { timeout: 30_000 }).toBe(expected);
    expect(await shown.textContent()).toContain('Expires within 30 days');
  }

  async function serving(node: string): Promise<Certificate | undefined> {
    const result = await world.gql<{ nodeCertificates: { certificates: Certificate[] } }>(CERTIFICATES, { c: world.clusterId, n: node });
    expect(result.errors).toBeUndefined();
    return result.data?.nodeCertificates.certificates.find((entry) => entry.kind === 'SERVING');
  }

  async function csrs(): Promise<CsrView[]> {
    const result = await world.gql<{ csrs: CsrView[] }>(CSRS, { c: world.clusterId });
    expect(result.errors).toBeUndefined();
    return result.data?.csrs ?? [];
  }

  function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
    return eventually(check, { what, timeoutMs, intervalMs: 300, context: () => world.api.output().slice(-3000) });
  }

  function nodeReady(name: string): string | undefined {
    const node = world.sim.store.list(world.sim.resource('nodes')).find((candidate) => candidate.metadata.name === name) as unknown as
      | { status?: { conditions?: Array<{ type: string; status: string }> } }
      | undefined;
    return node?.status?.conditions?.find((condition) => condition.type === 'Ready')?.status;
  }

  async function kubeletJournal(): Promise<string> {
    return String((await world.lab.exec(world.lab.hosts[0].id, ['journalctl', '-u', 'kubelet', '--no-pager'])).stdout);
  }

  function rotationsLogged(journal: string): number {
    return journal.split('\n').filter((line) => line.includes(`${SERVING_SIGNER}: Certificate rotated`)).length;
  }

  async function setSwitches(variables: { enabled?: boolean; renewals?: boolean }): Promise<void> {
    const result = await world.gql('mutation($c: ID!, $e: Boolean, $r: Boolean) { setCsrAutoApprove(clusterId: $c, enabled: $e, renewals: $r) { csrAutoApprove autoApproveRenewals } }', {
      c: world.clusterId, e: variables.enabled, r: variables.renewals,
    });
    expect(result.errors).toBeUndefined();
  }

  /** A client of kube-sim authenticated as `system:node:<name>` (what a node's client certificate gives). */
  async function asNode(name: string): Promise<CertificatesV1Api> {
    const config = new KubeConfig();
    config.loadFromString(world.sim.kubeconfigFor(await world.sim.issueClientCertificate(`system:node:${name}`, ['system:nodes']), `node-${name}`));
    return config.makeApiClient(CertificatesV1Api);
  }

  /** A client of kube-sim with the node's own kubelet client certificate, read from the host (what a renewal is filed with). */
  async function asKubelet(hostId: string): Promise<CertificatesV1Api> {
    const pem = String((await world.lab.exec(hostId, ['cat', '/var/lib/kubelet/pki/kubelet-client-current.pem'])).stdout);
    const blocks = pem.match(/-----BEGIN [^-]+-----[\s\S]+?-----END [^-]+-----\n?/g) ?? [];
    const certPem = blocks.filter((block) => block.includes('CERTIFICATE')).join('');
    const keyPem = blocks.filter((block) => block.includes('PRIVATE KEY')).join('');
    const config = new KubeConfig();
    config.loadFromString(world.sim.kubeconfigFor({ certPem, keyPem }, `kubelet-${hostId}`));
    return config.makeApiClient(CertificatesV1Api);
  }

  async function fileServingCsr(api: CertificatesV1Api, node: string, dnsNames: string[], ipAddresses: string[]): Promise<string> {
    const { csrPem } = await generateCertificateRequest({ commonName: `system:node:${node}`, organizations: ['system:nodes'], dnsNames, ipAddresses });
    const created = await api.createCertificateSigningRequest({
      body: { metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: SERVING_SIGNER, usages: ['digital signature', 'server auth'], expirationSeconds: 600 } },
    });
    return created.metadata?.name ?? '';
  }

  it('renews twice with join auto-approve off, stays Ready, shows each expiry; hostile renewals wait with the check named; renewals off leaves the kubelet\'s pending', async () => {
    const host = world.lab.hosts[0];
    const node = host.hostname.toLowerCase();
    const nodeId = await world.addHost(0);
    await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
    const started = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
    expect(started.errors).toBeUndefined();
    const joined = await world.waitForStatus(nodeId, ['JOINED', 'INSTALL_FAILED', 'STALLED'], 300_000);
    expect(joined.status).toBe('JOINED');

    // The join path signed the first serving certificate, for 10 minutes.
    const first = await until('first serving certificate', () => serving(node));
    const firstLeft = new Date(first.notAfter).getTime() - Date.now();
    expect(firstLeft).toBeGreaterThan(8 * 60_000);
    expect(firstLeft).toBeLessThanOrEqual(10 * 60_000 + 5_000);
    expect(first.expiringSoon).toBe(true);

    // The console: the node list warns (10 minutes left), the node page shows the expiry.
    await signIn();
    await page.goto(`http://127.0.0.1:${world.api.port}/clusters/${world.clusterId}/nodes`);
    await page.getByTestId('certificate-warning').first().waitFor({ timeout: 30_000 });
    await page.goto(`http://127.0.0.1:${world.api.port}/clusters/${world.clusterId}/nodes/${nodeId}`);
    await pageShowsServingExpiry(first.notAfter);
    await screenshot(page, SCREENSHOTS, 'node-first-certificate');

    // Join auto-approve off: renewals have their own switch, still on.
    await setSwitches({ enabled: false });

    const seen = [first];
    for (const round of [1, 2]) {
      await world.lab.faults.advanceClock(host.id, CLOCK_JUMP_SECONDS);
      const previous = seen.at(-1) as Certificate;
      const renewed = await until(`renewal ${round}`, async () => {
        const current = await serving(node);
        return current && current.csrName !== previous.csrName ? current : undefined;
      }, 90_000).catch(async (error: Error) => {
        const faults = await world.lab.exec(host.id, ['cat', '/var/lib/ccos-lab/faults.json']);
        throw new Error(`${error.message}\nkubelet journal:\n${(await kubeletJournal()).split('\n').slice(-40).join('\n')}\nfaults: ${String(faults.stdout)}`);
      });
      expect(new Date(renewed.notAfter).getTime(), `renewal ${round} expires later`).toBeGreaterThan(new Date(previous.notAfter).getTime());
      // The decision is written right after the approval; the certificate may be seen first.
      const csr = await until(`renewal ${round} recorded`, async () => (await csrs()).find((entry) => entry.name === renewed.csrName && entry.decisions.length > 0));
      expect(csr.requester.username).toBe(`system:node:${node}`);
      expect(csr.decisions).toEqual([expect.objectContaining({ decision: 'APPROVED', actor: 'auto-approver', reason: 'auto-approved: a serving-certificate renewal: all 18 checks passed' })]);
      expect(nodeReady(host.hostname), `Ready after renewal ${round}`).toBe('True');
      // The kubelet plans its next rotation on receipt: the clock moves again only after that.
      await until(`the kubelet took renewal ${round}`, async () => (rotationsLogged(await kubeletJournal()) >= round ? true : undefined));
      // The open node page follows without a reload.
      await pageShowsServingExpiry(renewed.notAfter);
      await screenshot(page, SCREENSHOTS, `node-renewal-${round}`);
      seen.push(renewed);
    }
    // The kubelet wrote each certificate; the current one is the second renewal's.
    const pki = await world.lab.exec(host.id, ['sh', '-c', 'ls /var/lib/kubelet/pki | grep -c "^kubelet-server-2"']);
    expect(Number(String(pki.stdout).trim())).toBe(3);

    // The metric carries the new expiry.
    const metrics = await (await fetch(`${world.api.url}/metrics`)).text();
    const exposed = new RegExp(`^ccos_certificate_expiry_timestamp_seconds\\{cluster="lab",node="${node}",kind="serving"\\} (\\S+)$`, 'm').exec(metrics)?.[1];
    expect(Number(exposed) * 1000).toBe(new Date(seen[2].notAfter).getTime());
    expect(metrics).toMatch(new RegExp(`^ccos_certificate_expiry_timestamp_seconds\\{cluster="lab",node="${node}",kind="client"\\} \\d+`, 'm'));

    // Hostile renewals: each stays pending, the auto-approver records why once, naming the check.
    // The node's own credential (its kubelet's client certificate) files the ones that claim the node.
    const self = await asNode(node);
    const kubelet = await asKubelet(host.id);
    const vip = world.lab.vip;
    const hostile: Record<string, { name: string; check: string }> = {
      'another node\'s name': { name: await fileServingCsr(self, 'not-me', ['not-me'], [host.ip]), check: 'requester' },
      'a foreign IP': { name: await fileServingCsr(kubelet, node, [node], [host.ip, '10.9.9.9']), check: 'renewal-sans' },
      'the VIP': { name: await fileServingCsr(kubelet, node, [node], [host.ip, vip]), check: 'no-cluster-address' },
      'a node this service did not join': { name: await fileServingCsr(await asNode('stranger'), 'stranger', ['stranger'], ['198.18.0.250']), check: 'joined-here' },
      // The node's name, but a client certificate this service's runs never saw issued (an old disk's, a forged one).
      'a credential not issued in the node\'s run': { name: await fileServingCsr(self, node, [node], [host.ip]), check: 'run-credential' },
    };
    // With the two hostile renewals of the node pending, even a well-formed one must wait for an operator.
    hostile['a second pending renewal'] = { name: await fileServingCsr(kubelet, node, [node], [host.ip]), check: 'single-pending-renewal' };
    for (const [what, { name, check }] of Object.entries(hostile)) {
      const view = await until(`${what} recorded`, async () => (await csrs()).find((entry) => entry.name === name && entry.decisions.length > 0));
      expect(view.status, what).toBe('PENDING');
      expect(view.decisions.map((decision) => decision.decision), what).toEqual(['LEFT_PENDING']);
      expect(view.verdict.checks.find((entry) => entry.name === check)?.passed, `${what}: ${check} fails`).toBe(false);
    }
    expect((await csrs()).find((entry) => entry.name === hostile['a node this service did not join'].name)?.verdict.reason).toContain('this service did not join it, so renewing its serving certificate is left for an operator');
    // The well-formed one first: once the hostile ones are gone it would be the only pending renewal, and approvable.
    for (const { name } of Object.values(hostile).reverse()) {
      const denied = await world.gql('mutation($c: ID!, $n: String!) { denyCsr(clusterId: $c, name: $n, reason: "e2e: hostile renewal") { status } }', { c: world.clusterId, n: name });
      expect(denied.errors).toBeUndefined();
    }

    // Renewals off: the kubelet's next renewal waits, and says why; the metric shows it waiting.
    await setSwitches({ renewals: false });
    await world.lab.faults.advanceClock(host.id, CLOCK_JUMP_SECONDS);
    const waiting = await until('the kubelet\'s renewal with renewals off', async () =>
      (await csrs()).find((entry) => entry.status === 'PENDING' && entry.requester.username === `system:node:${node}` && !Object.values(hostile).some((known) => known.name === entry.name)),
    90_000);
    // The policy would approve it; only the switches hold it: with both off, the cluster's approver has stopped (its
    // leader metric says so), so nothing here decides the renewal.
    expect(waiting.verdict.decision).toBe('APPROVE');
    await until('the approver to stop with both switches off', async () =>
      /^ccos_csr_approver_leader\{cluster="lab"\} 1$/m.test(await (await fetch(`${world.api.url}/metrics`)).text()) ? undefined : true);
    expect((await csrs()).find((entry) => entry.name === waiting.name)?.status, 'still pending with renewals off').toBe('PENDING');
    const held = await world.gql<{ nodeCertificates: { pendingRenewals: Array<{ csrName: string; reason: string }> } }>(CERTIFICATES, { c: world.clusterId, n: node });
    expect(held.data?.nodeCertificates.pendingRenewals).toEqual([{ node, csrName: waiting.name, reason: 'renewal auto-approve is off for this cluster; the renewal policy would approve it' }]);
    expect(waiting.verdict.path).toBe('RENEWAL');
    expect((await serving(node))?.csrName, 'the old certificate stays current').toBe(seen[2].csrName);
    const pendingMetrics = await (await fetch(`${world.api.url}/metrics`)).text();
    expect(pendingMetrics).toMatch(new RegExp(`^ccos_certificate_renewal_pending_since_timestamp_seconds\\{cluster="lab",node="${node}"\\} \\d+`, 'm'));
    expect(nodeReady(host.hostname)).toBe('True');

    // Renewals on again: the waiting renewal is approved at once.
    await setSwitches({ renewals: true });
    const third = await until('approved once renewals are on', async () => {
      const current = await serving(node);
      return current && current.csrName === waiting.name ? current : undefined;
    });
    expect(new Date(third.notAfter).getTime()).toBeGreaterThan(new Date(seen[2].notAfter).getTime());
  }, 900_000);
});
