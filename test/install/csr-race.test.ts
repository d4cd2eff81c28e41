import { request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { CertificatesV1Api, KubeConfig, Watch, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest } from '@ccos/tools/kube-sim';
import { KUBELET_PATHS } from '@ccos/tools/lab';
import { launchChromium, screenshot, signInAsAdmin } from '../support/console-browser';
import { BOOTSTRAP_NAMESPACE, type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The race issue 11 describes, on a real lab host with auto-approve on: while the host installs,
 * an attacker who fetched the worker Ignition from the machine config server (anyone who can
 * reach :22623 can) files a client CSR for that node every 0.3 s with the shared bootstrap
 * credential in it and a key of its own. None may ever be approved; the real kubelet's CSR
 * (filed with the identity the service minted for this run alone) is, and the node joins. The
 * attempts are denied as impostors and show on the install run, in the audit log, in the
 * metric and on the console's certificates page. Needs `npx nx run-many -t build -p api console boot-worker`.
 */
const ATTACK_EVERY_MS = 300;
const SCREENSHOTS = 'tmp/csr-race-e2e';
const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

interface IgnitionFile {
  readonly path: string;
  readonly contents: { readonly source: string };
}

/** GET https://<VIP>:22623/config/worker, as any host on the network can. */
function fetchWorkerIgnition(vip: string, caPem: string): Promise<{ storage: { files: IgnitionFile[] } }> {
  return new Promise((resolve, reject) => {
    const req = request(`https://${vip}:22623/config/worker`, { ca: caPem, headers: { accept: 'application/vnd.coreos.ignition+json;version=3.2.0' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`machine config server answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

function dataUrlText(source: string): string {
  const comma = source.indexOf(',');
  const meta = source.slice(0, comma);
  const body = source.slice(comma + 1);
  return meta.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
}

const conditionTypes = (csr: V1CertificateSigningRequest): string[] => (csr.status?.conditions ?? []).map((condition) => condition.type);

describe('CSR race: an impostor with the shared bootstrap credential cannot take a node being installed', () => {
  let world: ScaleOutWorld;
  let browser: Browser;
  let page: Page;
  /** The attacker's client: the worker Ignition's bootstrap kubeconfig, used as it is. */
  let attacker: CertificatesV1Api;

  beforeAll(async () => {
    [world, browser] = await Promise.all([startScaleOutWorld({ hosts: 1, csrAutoApprove: true }), launchChromium()]);
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await world?.stop();
  });

  it('denies every impostor CSR, approves the kubelet\'s, and the node joins; the attempts are raised everywhere', async () => {
    const host = world.lab.hosts[0];
    // The attacker's credential: the bootstrap kubeconfig of the worker Ignition, used as it is.
    const ignition = await fetchWorkerIgnition(world.lab.vip, world.lab.machineConfigCaCert);
    const bootstrap = ignition.storage.files.find((file) => file.path === KUBELET_PATHS.bootstrapKubeconfig);
    expect(bootstrap, 'the worker Ignition carries a bootstrap kubeconfig').toBeDefined();
    const sharedKubeconfig = dataUrlText(bootstrap?.contents.source ?? '');
    const attackerConfig = new KubeConfig();
    attackerConfig.loadFromString(sharedKubeconfig);
    const sharedToken = attackerConfig.getCurrentUser()?.token ?? '';
    expect(sharedToken).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    attacker = attackerConfig.makeApiClient(CertificatesV1Api);

    // Who files what, and when each CSR was first seen and first seen approved or denied.
    const admin = new KubeConfig();
    admin.loadFromString(world.sim.kubeconfig);
    const seen = new Map<string, { created: number; decided?: number; username?: string; approvedEver: boolean }>();
    const watching = await new Watch(admin).watch(
      '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      { resourceVersion: '0' },
      (_type, object: V1CertificateSigningRequest) => {
        const name = object.metadata?.name ?? '';
        const entry = seen.get(name) ?? { created: performance.now(), username: object.spec.username, approvedEver: false };
        const types = conditionTypes(object);
        if (entry.decided === undefined && (types.includes('Approved') || types.includes('Denied'))) {
          entry.decided = performance.now();
        }
        entry.approvedEver ||= types.includes('Approved');
        seen.set(name, entry);
      },
      () => undefined,
    );

    const nodeId = await world.addHost(0);
    await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
    const started = await world.gql<{ installNode: { id: string } }>('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
    expect(started.errors).toBeUndefined();
    const runId = started.data?.installNode.id ?? '';

    // The attacker races the kubelet for the whole install, each time with a key of its own.
    const filed: string[] = [];
    let attacking = true;
    const attack = (async () => {
      while (attacking) {
        const { csrPem } = await generateCertificateRequest({ commonName: `system:node:${host.hostname}`, organizations: ['system:nodes'] });
        const created = await attacker.createCertificateSigningRequest({
          body: { metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'] } },
        });
        filed.push(created.metadata?.name ?? '');
        await new Promise((resolve) => setTimeout(resolve, ATTACK_EVERY_MS));
      }
    })();
    const joined = await world.waitForStatus(nodeId, ['JOINED', 'INSTALL_FAILED', 'STALLED'], 300_000).finally(() => {
      attacking = false;
    });
    await attack;
    expect(joined.status, joined.statusReason ?? '').toBe('JOINED');
    expect(filed.length).toBeGreaterThanOrEqual(10);

    const certificates = admin.makeApiClient(CertificatesV1Api);
    const runIdentity = `system:serviceaccount:${BOOTSTRAP_NAMESPACE}:run-${runId}`;
    // Every impostor CSR is denied as such; none was ever approved.
    await expect
      .poll(async () => {
        const states = await Promise.all(filed.map(async (name) => conditionTypes(await certificates.readCertificateSigningRequest({ name })).join(',')));
        return states.filter((state) => state !== 'Denied').length;
      }, { timeout: 20_000, interval: 250 })
      .toBe(0);
    expect(filed.filter((name) => seen.get(name)?.approvedEver)).toEqual([]);
    const sample = await certificates.readCertificateSigningRequest({ name: filed[0] ?? '' });
    expect(sample.spec.username).toMatch(/^system:bootstrap:[a-z0-9]{6}$/);
    expect(sample.status?.conditions?.[0]).toMatchObject({ type: 'Denied', reason: 'CcosScalerImpostor' });
    expect(sample.status?.conditions?.[0]?.message).toContain(`impostor: a client CSR for ${host.hostname} requested by ${sample.spec.username}, not by the bootstrap identity of the install run of ${host.hostname} (${runIdentity})`);

    // The kubelet's own client CSR, filed with the run's identity, was approved and issued.
    const all = (await certificates.listCertificateSigningRequest()).items;
    const kubelet = all.filter((csr) => csr.spec.signerName === CLIENT_SIGNER && csr.spec.username === runIdentity);
    expect(kubelet).toHaveLength(1);
    expect(conditionTypes(kubelet[0] as V1CertificateSigningRequest)).toEqual(['Approved']);
    expect(kubelet[0]?.status?.certificate).toBeTruthy();
    const node = world.sim.store.list(world.sim.resource('nodes')).find((candidate) => candidate.metadata.name === host.hostname) as unknown as
      | { status?: { conditions?: Array<{ type: string; status: string }> } }
      | undefined;
    expect(node?.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');

    // On the host: kubelet bootstrapped with the run's token, not the shared one; once the run ended, that token is dead.
    const onHost = await world.lab.exec(host.hostname, ['cat', KUBELET_PATHS.bootstrapKubeconfig]);
    expect(onHost.stdout).not.toContain(sharedToken);
    const config = JSON.parse((await world.lab.exec(host.hostname, ['cat', `/opt/ccos-scaler/runs/${runId}/config.json`])).stdout) as { kubeletBootstrapToken: string };
    expect(onHost.stdout).toContain(config.kubeletBootstrapToken);
    const asRun = new KubeConfig();
    asRun.loadFromString(world.sim.kubeconfigFor({ token: config.kubeletBootstrapToken }, 'run'));
    await expect
      .poll(async () => asRun.makeApiClient(CertificatesV1Api).listCertificateSigningRequest().then(() => 'accepted', (error: { code?: number }) => error.code), { timeout: 20_000 })
      .toBe(401);

    // Raised on the install run (one notice per impostor identity, counted), in the audit log and in the metric.
    const runs = await world.gql<{ node: { installRuns: Array<{ id: string; bootstrapIdentity: string; bootstrapIdentityRevokedAt: string | null; notices: Array<{ kind: string; subject: string; count: number }> }> } }>(
      'query($id: ID!) { node(id: $id) { installRuns { id bootstrapIdentity bootstrapIdentityRevokedAt notices { kind subject count } } } }',
      { id: nodeId },
    );
    const run = runs.data?.node.installRuns.find((entry) => entry.id === runId);
    expect(run).toMatchObject({ bootstrapIdentity: runIdentity, notices: [{ kind: 'CSR_IMPOSTOR', subject: sample.spec.username, count: filed.length }] });
    expect(run?.bootstrapIdentityRevokedAt).not.toBeNull();
    const audited: Array<{ id: string; targetId: string; detail: Record<string, unknown> }> = [];
    for (let before: string | null = null; ; ) {
      const page: { data?: { auditLog: { entries: typeof audited; hasMore: boolean } } | null } = await world.gql(
        'query($before: ID) { auditLog(filter: { actor: "auto-approver", action: "denyCsr" }, first: 200, before: $before) { entries { id targetId detail } hasMore } }',
        { before },
      );
      const entries = page.data?.auditLog.entries ?? [];
      audited.push(...entries.filter((entry) => entry.detail['impostor'] === true));
      if (!page.data?.auditLog.hasMore || entries.length === 0) {
        break;
      }
      before = entries[entries.length - 1]?.id ?? null;
    }
    expect(audited.map((entry) => entry.targetId).sort()).toEqual([...filed].sort());
    expect(new Set(audited.map((entry) => entry.detail['requester']))).toEqual(new Set([sample.spec.username]));
    await expect
      .poll(async () => /^ccos_csr_impostors_denied_total\{cluster="lab"\} (\d+)$/m.exec(await (await fetch(`${world.api.url}/metrics`)).text())?.[1], { timeout: 10_000 })
      .toBe(String(filed.length));

    // The console's certificates page marks the attempts and says who made them.
    page = await (await browser.newContext({ viewport: { width: 1366, height: 900 }, locale: 'en-US' })).newPage();
    await signInAsAdmin(page, `http://127.0.0.1:${world.api.port}`);
    await page.goto(`http://127.0.0.1:${world.api.port}/clusters/${world.clusterId}/csrs?csr=${filed[0]}`);
    const card = page.locator(`ccos-csr-card[data-csr="${filed[0]}"]`);
    await card.getByTestId('impostor').waitFor({ timeout: 20_000 });
    await expect.poll(() => card.locator('[data-status]').first().getAttribute('data-status')).toBe('DENIED');
    expect(await card.getByTestId('impostor-explained').textContent()).toContain(`Filed by ${sample.spec.username}, not by the identity this service gave the node's install run`);
    expect(await page.locator('ccos-csr-card').filter({ has: page.getByTestId('impostor') }).count()).toBe(filed.length);
    const real = page.locator(`ccos-csr-card[data-csr="${kubelet[0]?.metadata?.name}"]`);
    expect(await real.getByTestId('impostor').count()).toBe(0);
    await screenshot(page, SCREENSHOTS, 'impostors-denied-en');

    const realSeen = seen.get(kubelet[0]?.metadata?.name ?? '');
    const impostorLatencies = filed.map((name) => (seen.get(name)?.decided ?? Number.NaN) - (seen.get(name)?.created ?? Number.NaN)).filter(Number.isFinite).sort((a, b) => a - b);
    console.log(
      `csr race: ${filed.length} impostor CSRs (one every ${ATTACK_EVERY_MS} ms), 0 approved, all denied (p50 ${Math.round(impostorLatencies[Math.floor(impostorLatencies.length / 2)] ?? Number.NaN)} ms after creation); ` +
        `the kubelet's client CSR approved ${Math.round((realSeen?.decided ?? Number.NaN) - (realSeen?.created ?? Number.NaN))} ms after it was created`,
    );
    watching.abort();
  }, 600_000);

  it('lets an ADMIN force, on the certificates page, a CSR of a host this service did not install, only with a written reason, and shows it', async () => {
    // A host joined by hand with the shared credential: not in the inventory, so its requester may be forced past.
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:handmade', organizations: ['system:nodes'] });
    const created = await attacker.createCertificateSigningRequest({
      body: { metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'] } },
    });
    const name = created.metadata?.name ?? '';
    await page.goto(`http://127.0.0.1:${world.api.port}/clusters/${world.clusterId}/csrs?csr=${name}`);
    const card = page.locator(`ccos-csr-card[data-csr="${name}"]`);
    await card.getByRole('button', { name: 'Approve' }).click();
    const dialog = page.getByRole('dialog', { name: `Approve ${name} although the policy objects?` });
    await dialog.getByRole('checkbox').check();
    await dialog.getByRole('button', { name: 'Approve anyway' }).click();
    await dialog.getByText('Write why you approve this request against the policy.').waitFor();
    const admin = new KubeConfig();
    admin.loadFromString(world.sim.kubeconfig);
    const certificates = admin.makeApiClient(CertificatesV1Api);
    expect(conditionTypes(await certificates.readCertificateSigningRequest({ name }))).toEqual([]);

    const reason = 'handmade was joined by hand before this service managed the cluster (OPS-4711)';
    await dialog.getByRole('textbox', { name: /^Why approve it against the policy\?/ }).fill(reason);
    await screenshot(page, SCREENSHOTS, 'force-with-reason-en');
    await dialog.getByRole('button', { name: 'Approve anyway' }).click();
    await expect.poll(() => card.locator('[data-status]').first().getAttribute('data-status'), { timeout: 15_000 }).toBe('APPROVED');
    expect(await card.getByTestId('force-reason').textContent()).toBe(`Reason given: “${reason}”`);
    expect(conditionTypes(await certificates.readCertificateSigningRequest({ name }))).toEqual(['Approved']);
    const audit = await world.gql<{ auditLog: { entries: Array<{ actor: string; detail: { args: Record<string, unknown> } }> } }>(
      'query { auditLog(filter: { action: "approveCsr", result: SUCCESS }, first: 50) { entries { actor detail } } }',
    );
    expect(audit.data?.auditLog.entries.find((entry) => entry.detail.args['name'] === name)).toMatchObject({ actor: 'admin', detail: { args: { force: true, reason } } });
  }, 120_000);
});
