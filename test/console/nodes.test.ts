import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { FailedJobsDocument } from '@ccos/shared/api-schema';
import { INSTALL_STEPS, STEP_CATALOGUE, describeStep } from '@ccos/shared/domain';
import { formatMessage } from '@ccos/shared/messages';
import { type PageRecord, descriptionOf, screenshot, signInAsAdmin } from '../support/console-browser';
import { useConsoleWorld } from '../support/console-world';
import { kubectl } from '../support/kubectl-drain';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * Scale-out through the console, against the real world: kube-sim as the cluster, a lab
 * host running sshd, the built API and agent, Chromium. An operator adds the host with the
 * 录入节点 form, watches it get ready and install live (no reload, no polling), approves
 * its CSRs on the certificate page, and sees it join; then the page in Chinese, and a
 * VIEWER who may look but not act. The tests run in order and share one page.
 * Needs `npx nx run-many -t build -p api console boot-worker`.
 */
const SCREENSHOTS = 'tmp/console-nodes-e2e';
const VIEWER = { username: 'viewer1', password: 'viewer1-password' };

/** Browser-side snippets (strings, so this Node-side file needs no DOM types). */
const MARK_DOCUMENT = 'window.__sameDocument = true';
const SAME_DOCUMENT = 'window.__sameDocument === true';
const KEEPS_SECRET = `(secret) =>
  document.documentElement.outerHTML.includes(secret) ||
  JSON.stringify({ ...sessionStorage }).includes(secret) ||
  JSON.stringify({ ...localStorage }).includes(secret) ||
  [...document.querySelectorAll('input, textarea')].some((field) => field.value === secret)`;
/** Records every change of a step's state (data-state), to tell a live stepper from one that jumped to the end. */
const RECORD_STEP_STATES = `(() => {
  const seen = [];
  window.__stepStates = seen;
  new MutationObserver((records) => {
    for (const record of records) {
      seen.push(record.target.dataset.step + ':' + record.target.dataset.state);
    }
  }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
})()`;

let world: ScaleOutWorld;
let page: Page;
let baseUrl = '';
let nodeUrl = '';
let record: PageRecord;

describe('console: nodes and certificates', () => {
  // The lab lock may be held by another engineer's run; startScaleOutWorld waits for it.
  const shared = useConsoleWorld({
    start: () => startScaleOutWorld({ hosts: 3, nodeMonitorGracePeriodSeconds: 20, apiEnv: { SSH_CONNECT_TIMEOUT_MS: '3000', JOB_MAX_ATTEMPTS: '2', HEALTH_CHECK_INTERVAL_SECONDS: '5' } }),
    screenshots: SCREENSHOTS,
    startTimeoutMs: 900_000,
  });
  beforeAll(async () => {
    ({ world, page, record, baseUrl } = shared);
    const created = await world.gql('mutation($input: CreateUserInput!) { createUser(input: $input) { id } }', { input: { ...VIEWER, role: 'VIEWER' } });
    expect(created.errors).toBeUndefined();
  });

  it('signs in and opens the cluster nodes page from the cluster page', async () => {
    await signInAsAdmin(page, baseUrl);
    await page.getByRole('link', { name: 'lab', exact: true }).click();
    await page.getByRole('heading', { name: 'lab', level: 1 }).waitFor();
    // The side navigation offers the open cluster's pages too.
    await page.getByRole('navigation').getByRole('link', { name: 'Certificates' }).waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Nodes' }).click();
    await page.getByRole('heading', { name: 'Nodes of lab', level: 1 }).waitFor();
    await page.getByText('No nodes yet').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/clusters/${world.clusterId}/nodes`);
    await snap('nodes-empty-en');
  });

  it('adds the lab host through the form, checking the input first and keeping no password', async () => {
    const host = world.lab.hosts[0];
    await page.getByRole('main').getByRole('link', { name: 'Add node' }).first().click();
    await page.getByRole('heading', { name: 'Add node', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'Host name' }).fill(host.hostname);
    const ip = page.getByRole('textbox', { name: 'IP address' });
    await ip.fill('198.18.0.300');
    await page.getByRole('textbox', { name: 'SSH user' }).fill(host.user);
    await page.getByRole('textbox', { name: 'SSH port' }).fill(String(host.port));
    await page.getByLabel(/^Password/).fill(host.password);
    await page.getByRole('button', { name: 'Add label' }).click();
    await page.getByRole('group', { name: 'Label 1' }).getByLabel('Key').fill('disk-type');
    await page.getByRole('group', { name: 'Label 1' }).getByLabel('Value').fill('ssd');
    await snap('add-node-en');
    await page.getByRole('button', { name: 'Add node' }).click();
    await expect.poll(() => descriptionOf(ip)).toContain('Enter an IPv4 or IPv6 address');
    expect(await ip.getAttribute('aria-invalid')).toBe('true');
    expect(record.graphqlOperations).not.toContain('AddNode');

    await ip.fill(host.ip);
    await page.getByRole('button', { name: 'Add node' }).click();
    await page.getByRole('heading', { name: host.hostname, level: 1 }).waitFor();
    nodeUrl = page.url();
    expect(new URL(nodeUrl).pathname).toMatch(new RegExp(`^/clusters/${world.clusterId}/nodes/[0-9a-f-]{36}$`));
    expect(record.graphqlOperations.filter((name) => name === 'AddNode')).toHaveLength(1);
    // The password went to the API once and stays nowhere in the page or its storage.
    const kept = await page.evaluate(`(${KEEPS_SECRET})(${JSON.stringify(host.password)})`);
    expect(kept).toBe(false);
  });

  it('shows the node reach READY_TO_INSTALL live, without a reload or polling', async () => {
    await page.evaluate(MARK_DOCUMENT);
    const nodeId = new URL(nodeUrl).pathname.split('/').pop();
    const nodeReads = () => record.graphqlOperations.filter((name) => name === 'Node').length;
    const changesHeard = () => record.subscriptionData.filter((data) => (data['nodeChanged'] as { nodeId?: string } | undefined)?.nodeId === nodeId).length;
    const readsBefore = nodeReads();
    const changesBefore = changesHeard();
    const status = page.getByTestId('node-status');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 90_000 }).toBe('READY_TO_INSTALL');
    expect(await page.evaluate(SAME_DOCUMENT)).toBe(true);
    await page.getByText('Live', { exact: true }).waitFor();
    const host = world.lab.hosts[0];
    expect(await page.getByTestId('host-key').textContent()).toContain(world.lab.hostKeyFingerprints[host.id]?.ed25519 ?? 'SHA256:');
    // The node is re-read when the service says it changed (ADDING → READY_TO_INSTALL), not on a timer:
    // no more reads than changes heard (one more for a subscription that reconnected).
    const changes = changesHeard() - changesBefore;
    expect(nodeReads() - readsBefore).toBeLessThanOrEqual(changes + 1);
    await snap('node-ready-en');
  });

  it('shows the server error for the same host name next to the field, and clears the password', async () => {
    const host = world.lab.hosts[0];
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes/new`);
    const hostname = page.getByRole('textbox', { name: 'Host name' });
    await hostname.fill(host.hostname);
    await page.getByRole('textbox', { name: 'IP address' }).fill(world.lab.unassignedIps[1]);
    const password = page.getByLabel(/^Password/);
    await password.fill('whatever-password');
    await page.getByRole('button', { name: 'Add node' }).click();
    await expect.poll(() => descriptionOf(hostname)).toContain('is already a node of this cluster');
    expect(await hostname.getAttribute('aria-invalid')).toBe('true');
    expect(await password.inputValue()).toBe('');
    await page.getByText('the password or key was cleared after sending').waitFor();
    await page.goto(nodeUrl);
    await page.getByTestId('node-status').waitFor();
  });

  it('keeps Install disabled, with the failing check and a link to the cluster, while the cluster is not ready, and the API refuses it too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccos-console-readiness-'));
    const env = { HOME: dir, KUBECONFIG: join(dir, 'admin.kubeconfig') };
    await writeFile(env.KUBECONFIG, world.sim.adminKubeconfig ?? world.sim.kubeconfig, { mode: 0o600 });
    const binding = ['-n', 'ccos-scaler-bootstrap', 'rolebinding', 'ccos-scaler-bootstrap-identities'];
    try {
      const saved = await kubectl(env, ['get', ...binding, '-o', 'yaml']);
      expect(saved.code, saved.stderr).toBe(0);
      expect((await kubectl(env, ['delete', ...binding])).code).toBe(0);

      // The cluster page checks the cluster and records what it found; the node page shows that record (it asks the cluster nothing).
      const checks = page.getByTestId('cluster-checks');
      await page.goto(`${baseUrl}/clusters/${world.clusterId}`);
      await checks.getByTestId('cluster-checks-state').filter({ hasText: 'Not ready: installs would fail' }).waitFor({ timeout: 30_000 });
      await page.goto(nodeUrl);
      const notReady = page.getByTestId('cluster-not-ready');
      await notReady.waitFor({ timeout: 30_000 });
      expect(await notReady.innerText()).toContain('The cluster is not ready for installs (BOOTSTRAP_NAMESPACE, SERVICE_PERMISSIONS failed)');
      expect(await page.getByRole('button', { name: 'Install', exact: true }).isDisabled()).toBe(true);
      await snap('node-cluster-not-ready-en');
      const nodeId = new URL(nodeUrl).pathname.split('/').pop() ?? '';
      const refused = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
      expect(refused.errors?.[0]?.extensions?.['messageCode']).toBe('install.clusterNotReady');
      expect(refused.errors?.[0]?.message).toContain('cluster lab is not ready for installs: BOOTSTRAP_NAMESPACE, SERVICE_PERMISSIONS fail');
      const after = await world.gql<{ node: { status: string } }>('query($id: ID!) { node(id: $id) { status } }', { id: nodeId });
      expect(after.data?.node.status).toBe('READY_TO_INSTALL');

      const restored = await kubectl(env, ['apply', '-f', '-'], 60_000, saved.stdout);
      expect(restored.code, restored.stderr).toBe(0);
      await page.getByTestId('cluster-not-ready').getByRole('link').click();
      await checks.getByRole('button', { name: 'Check again' }).click();
      await checks.getByTestId('cluster-checks-state').filter({ hasText: /^\s*Ready\s*$/ }).waitFor({ timeout: 30_000 });
      await page.goto(nodeUrl);
      await page.getByTestId('node-status').waitFor();
      await expect.poll(() => page.getByRole('button', { name: 'Install', exact: true }).isEnabled(), { timeout: 30_000 }).toBe(true);
      expect(await notReady.count()).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('installs the node and shows the six steps progress live', async () => {
    await page.evaluate(MARK_DOCUMENT);
    await page.evaluate(RECORD_STEP_STATES);
    await page.getByRole('button', { name: 'Install', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Install ${world.lab.hosts[0].hostname}?` });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Preflight checks');
    await dialog.getByRole('button', { name: 'Install' }).click();
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('INSTALLING');

    for (const step of INSTALL_STEPS.slice(0, 5)) {
      await expect.poll(() => stepState(step), { timeout: 150_000 }).toBe('succeeded');
    }
    await expect.poll(() => stepState('START_KUBELET'), { timeout: 60_000 }).toBe('running');
    const kubeletStep = page.locator('li[data-step="START_KUBELET"]');
    await kubeletStep.getByRole('link', { name: /^Review csr-/ }).first().waitFor({ timeout: 60_000 });
    await snap('node-installing-en');

    const seen = (await page.evaluate('window.__stepStates')) as string[];
    const succeededOrder = seen.filter((entry) => entry.endsWith(':succeeded')).map((entry) => entry.split(':')[0]);
    expect([...new Set(succeededOrder)]).toEqual(INSTALL_STEPS.slice(0, 5));
    expect(seen).toContain('START_KUBELET:running');
    // The page followed the run as it went, not just its end.
    expect(seen.filter((entry) => entry.endsWith(':running')).length).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate(SAME_DOCUMENT)).toBe(true);
    const log = page.getByRole('region', { name: 'Event log' });
    expect(await log.textContent()).toContain('Download binaries');
  });

  it('approves the client CSR, then the serving CSR, on the certificate page, and the node joins', async () => {
    await page.locator('li[data-step="START_KUBELET"]').getByRole('link', { name: /^Review csr-/ }).first().click();
    await page.getByRole('heading', { name: 'Certificates of lab', level: 1 }).waitFor();
    await page.getByTestId('auto-approve-note').getByText('Auto-approve is off').waitFor();

    const pending = page.getByRole('region', { name: /^Waiting for a decision/ });
    const client = pending.locator('ccos-csr-card[data-kind="CLIENT"]');
    await client.waitFor();
    expect(await client.getByText('Policy would approve').count()).toBe(1);
    expect(await client.locator('.failed').count()).toBe(0);
    expect(await client.textContent()).toContain(world.lab.hosts[0].hostname);
    await expect.poll(() => page.getByTestId('policy-preview').textContent()).toContain('Policy would approve');
    await snap('csrs-client-pending-en');
    await client.getByRole('button', { name: 'Approve' }).click();
    const approveDialog = page.getByRole('dialog', { name: /^Approve csr-/ });
    await approveDialog.getByRole('button', { name: 'Approve' }).click();
    await approveDialog.waitFor({ state: 'hidden' });

    // kubelet gets its client certificate, registers the Node and asks for a serving one: it appears by itself.
    const serving = pending.locator('ccos-csr-card[data-kind="SERVING"]');
    await serving.waitFor({ timeout: 60_000 });
    expect(await serving.getByText('Policy would approve').count()).toBe(1);
    expect(await serving.textContent()).toContain(world.lab.hosts[0].ip);
    await serving.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: /^Approve csr-/ }).getByRole('button', { name: 'Approve' }).click();

    const decided = page.getByRole('region', { name: /^Recent decisions/ });
    await expect.poll(() => decided.locator('ccos-csr-card [data-status="APPROVED"]').count(), { timeout: 20_000 }).toBe(2);
    await pending.getByText('No CSR is waiting').waitFor();
    // The preview is asked again after the changes: nothing is left to judge.
    await page.getByTestId('policy-preview').getByText('No pending CSRs to judge.').waitFor();
    await snap('csrs-decided-en');

    await decided.locator('ccos-csr-card[data-kind="SERVING"]').getByRole('link', { name: world.lab.hosts[0].hostname }).first().click();
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 120_000 }).toBe('JOINED');
    await expect.poll(() => page.getByTestId('run-status').first().getAttribute('data-status'), { timeout: 30_000 }).toBe('SUCCEEDED');
    for (const step of INSTALL_STEPS) {
      expect(await stepState(step)).toBe('succeeded');
    }
    await snap('node-joined-en');
  });

  it('asks an admin to type the new host key before trusting it', async () => {
    const host = world.lab.hosts[1];
    // Swap on: the host is accepted, and its install will fail at PREFLIGHT (next test).
    await world.lab.faults.setSwap(host.id, true);
    const id = await world.addHost(1);
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 90_000);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes/${id}`);
    await page.getByRole('heading', { name: host.hostname, level: 1 }).waitFor();
    const fingerprints = await world.lab.faults.rekey(host.id);
    await page.getByRole('button', { name: 'Re-copy agent' }).click();
    await page.getByRole('dialog', { name: `Re-copy the agent to ${host.hostname}?` }).getByRole('button', { name: 'Re-copy agent' }).click();
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('HOST_KEY_CHANGED');

    await page.getByRole('button', { name: 'Accept new host key' }).click();
    const dialog = page.getByRole('dialog', { name: `Accept the new host key of ${host.hostname}?` });
    await dialog.waitFor();
    const offered = (await dialog.getByTestId('offered-fingerprint').textContent())?.trim() ?? '';
    expect(offered).toBe(fingerprints.ed25519);
    expect((await dialog.getByTestId('pinned-fingerprint').textContent())?.trim()).not.toBe(offered);
    const accept = dialog.getByRole('button', { name: 'Accept new key' });
    expect(await accept.isDisabled()).toBe(true);
    const typed = dialog.getByRole('textbox', { name: 'Fingerprint read on the host' });
    await typed.fill(offered.slice(0, -1) + (offered.endsWith('A') ? 'B' : 'A'));
    expect(await accept.isDisabled()).toBe(true);
    await typed.fill(offered);
    await snap('host-key-dialog-en');
    await accept.click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('READY_TO_INSTALL');
    expect((await page.getByTestId('host-key').textContent())?.trim()).toBe(offered);
  });

  it('shows a failed preflight with its hint and diagnostics, then retries and cancels, keeping the run history', async () => {
    const host = world.lab.hosts[1];
    await page.getByRole('button', { name: 'Install', exact: true }).click();
    await page.getByRole('dialog', { name: `Install ${host.hostname}?` }).getByRole('button', { name: 'Install' }).click();

    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('INSTALL_FAILED');
    expect(await stepState('PREFLIGHT')).toBe('failed');
    const preflight = page.locator('li[data-step="PREFLIGHT"]');
    await preflight.getByText('How to fix it').waitFor();
    // The catalogue's hint, its `commands` shown as code.
    expect(await preflight.textContent()).toContain(describeStep('PREFLIGHT').hint.message.replaceAll('`', ''));
    expect((await preflight.textContent())?.toLowerCase()).toContain('swap');
    await page.getByText('What to do next').waitFor();

    // The bundle arrives after the failure; the page picks it up without a reload.
    const download = page.getByRole('button', { name: 'Download diagnostics' });
    await download.waitFor({ timeout: 20_000 });
    await snap('node-failed-en');
    const [saved] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(saved.suggestedFilename()).toMatch(/^diagnostics-.+\.tar\.gz$/);
    const bundle = await readFile((await saved.path()) ?? '');
    expect([bundle[0], bundle[1]]).toEqual([0x1f, 0x8b]);

    await world.lab.faults.setSwap(host.id, false);
    await page.getByRole('button', { name: 'Retry install' }).click();
    await page.getByRole('dialog', { name: `Retry the install of ${host.hostname}?` }).getByRole('button', { name: 'Retry install' }).click();
    await expect.poll(() => stepState('START_KUBELET'), { timeout: 120_000 }).toBe('running');
    await page.getByRole('button', { name: 'Cancel install' }).click();
    await page.getByRole('dialog', { name: `Cancel the install of ${host.hostname}?` }).getByRole('button', { name: 'Cancel install' }).click();
    await expect.poll(() => page.getByTestId('run-status').first().getAttribute('data-status'), { timeout: 30_000 }).toBe('CANCELLED');
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('INSTALL_FAILED');

    const history = page.getByRole('region', { name: 'Earlier runs (1)' });
    await history.locator('summary').first().click();
    await expect.poll(() => history.locator('li[data-step="PREFLIGHT"]').getAttribute('data-state')).toBe('failed');
    await snap('node-history-en');
  });

  it('lists a job that failed every attempt with its error; an ADMIN retries it once the cause is gone and it completes', async () => {
    const host = world.lab.hosts[2];
    const database = new pg.Client({ connectionString: world.api.database?.url });
    await database.connect();
    try {
      // The database refuses every change to this host's record, as a full disk would.
      await database.query(`CREATE FUNCTION refuse_node_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'could not extend file "base/16384/16402": No space left on device'; END $$`);
      await database.query(`CREATE TRIGGER refuse_node_change BEFORE UPDATE ON nodes FOR EACH ROW WHEN (OLD.ip = '${host.ip}') EXECUTE FUNCTION refuse_node_change()`);
      const nodeId = await world.addHost(2);
      const failedJob = async () => (await world.gql(FailedJobsDocument, {})).data?.failedJobs.find((job) => job.nodeId === nodeId);
      await expect.poll(failedJob, { timeout: 60_000 }).toMatchObject({ task: 'node.provision', attempts: 2, maxAttempts: 2, clusterId: world.clusterId, nodeName: host.hostname });
      expect((await failedJob())?.lastError).toContain('No space left on device');
      // Nothing is lost meanwhile: the node waits, still being added.
      expect((await world.waitForStatus(nodeId, ['ADDING'], 1000)).status).toBe('ADDING');

      await page.goto(`${baseUrl}/clusters`);
      await page.getByRole('navigation').getByRole('link', { name: 'Failed jobs' }).click();
      await page.getByRole('heading', { name: 'Failed jobs', level: 1 }).waitFor();
      const row = page.getByTestId('failed-jobs').getByRole('row').filter({ has: page.getByRole('link', { name: host.hostname }) });
      await row.getByText('No space left on device', { exact: false }).waitFor();
      expect(await row.textContent()).toContain('Check the host and copy the agent');
      expect(await row.textContent()).toContain('2 of 2');
      await snap('failed-job-en');

      await database.query('DROP TRIGGER refuse_node_change ON nodes');
      await row.getByRole('button', { name: 'Retry' }).click();
      await page.getByText(/^Job \d+ runs again now\.$/).waitFor();
      await expect.poll(() => row.count()).toBe(0);
      await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 60_000);
      expect(await failedJob()).toBeUndefined();
      const audit = await world.gql<{ auditLog: { entries: Array<{ actor: string; result: string }> } }>('{ auditLog(filter: { action: "retryJob" }) { entries { actor result } } }', {});
      expect(audit.data?.auditLog.entries).toEqual([{ actor: 'admin', result: 'SUCCESS' }]);
    } finally {
      await database.query('DROP TRIGGER IF EXISTS refuse_node_change ON nodes');
      await database.end();
    }
  });

  it('shows the joined node unhealthy when its kubelet stops, naming why, and healthy again once it runs', async () => {
    const host = world.lab.hosts[0];
    await page.goto(nodeUrl);
    const health = page.getByTestId('node-health');
    await expect.poll(() => health.getAttribute('data-health'), { timeout: 30_000 }).toBe('HEALTHY');
    await health.getByText(/^Host last checked over SSH /).waitFor({ timeout: 30_000 });

    expect((await world.lab.exec(host.hostname, ['systemctl', 'stop', 'kubelet'])).code).toBe(0);
    const inactive = health.locator('li[data-problem="KUBELET_INACTIVE"]');
    await inactive.waitFor({ timeout: 30_000 });
    expect(await health.getAttribute('data-health')).toBe('UNHEALTHY');
    // A check that lands while systemd is still stopping the unit sees it deactivating, as on a real host.
    expect(await inactive.textContent()).toMatch(/the kubelet unit is not active on the host: systemctl is-active kubelet says (inactive|deactivating)/);
    // The cluster notices too, once the heartbeats are missed for its grace period.
    await health.locator('li[data-problem="READY_UNKNOWN"]').waitFor({ timeout: 60_000 });
    await snap('node-unhealthy-en');
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('row').filter({ hasText: host.hostname }).getByTestId('unhealthy').waitFor();

    expect((await world.lab.exec(host.hostname, ['systemctl', 'start', 'kubelet'])).code).toBe(0);
    await expect.poll(async () => (await page.getByRole('row').filter({ hasText: host.hostname }).getByTestId('unhealthy').count()), { timeout: 60_000 }).toBe(0);
    await page.goto(nodeUrl);
    await expect.poll(() => health.getAttribute('data-health'), { timeout: 30_000 }).toBe('HEALTHY');
  });

  it('shows what the joined host runs, and names a unit edited by hand once inspected', async () => {
    const host = world.lab.hosts[0];
    const unit = '/etc/systemd/system/ccos-node-init.service';
    await page.goto(nodeUrl);
    const card = page.getByTestId('host-manifest');
    await card.waitFor({ timeout: 30_000 });
    expect(await card.textContent()).toMatch(/\d+ files written by its install, from artifact set \S+/);
    // The kernel and the kubelet as the install found them, its arguments behind a disclosure.
    expect((await card.getByTestId('manifest-kernel').textContent())?.trim()).toBe((await world.lab.exec(host.hostname, ['uname', '-r'])).stdout.trim());
    expect((await card.getByTestId('manifest-kubelet').textContent())?.trim()).toMatch(/^v\d+\.\d+\.\d+\S*$/);
    const flags = card.getByTestId('manifest-flags');
    expect(await flags.getByText('--config=/etc/kubernetes/kubelet.conf').isVisible()).toBe(false);
    await flags.locator('summary').click();
    await flags.getByText('--config=/etc/kubernetes/kubelet.conf').waitFor();
    // The host's hardware, as it told it when it was added.
    expect(await page.getByTestId('fact-cpus').textContent()).toMatch(/^\s*\d+/);
    expect(await page.getByTestId('fact-memory').textContent()).toMatch(/\d+(\.\d+)? (GiB|MiB)/);
    await world.lab.exec(host.hostname, ['sh', '-c', `echo '# edited by hand' >> ${unit}`]);
    try {
      await card.getByRole('button', { name: 'Inspect now' }).click();
      await expect.poll(() => card.getAttribute('data-state'), { timeout: 30_000 }).toBe('DRIFTED');
      expect(await card.locator(`li[data-path="${unit}"]`).textContent()).toMatch(/changed \(recorded [0-9a-f]{12}…, now [0-9a-f]{12}…\)/);
      await snap('node-drifted-en');
      // The list flags it, and a filter shows only hosts that drifted.
      await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes?status=drifted`);
      const row = page.getByRole('row').filter({ hasText: host.hostname });
      expect(await row.getByTestId('host-state').getAttribute('data-state')).toBe('DRIFTED');
      expect(await page.locator('#node-status-filter').inputValue()).toBe('drifted');
      expect(await page.locator('tr[data-node]').count()).toBe(1);
      await page.goto(nodeUrl);
      await card.waitFor();
    } finally {
      await world.lab.exec(host.hostname, ['sed', '-i', '$d', unit]);
    }
    await card.getByRole('button', { name: 'Inspect now' }).click();
    await expect.poll(() => card.getAttribute('data-state'), { timeout: 30_000 }).toBe('CURRENT');
  });

  it('shows the step titles in Chinese after switching language', async () => {
    await page.goto(nodeUrl);
    await page.getByTestId('node-status').waitFor();
    await page.getByRole('button', { name: '简体中文' }).click();
    await page.getByText('已加入', { exact: true }).first().waitFor();
    const titles = await page.locator('li[data-step] .title').allTextContents();
    expect(titles.map((title) => title.trim())).toEqual(STEP_CATALOGUE.map((entry) => formatMessage('zh-CN', entry.title.code)));
    await page.getByRole('heading', { name: '安装', level: 2 }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: '证书处理' }).waitFor();
    await snap('node-joined-zh');
    await page.getByRole('navigation').getByRole('link', { name: '证书处理' }).click();
    await page.getByRole('heading', { name: 'lab 的证书处理', level: 1 }).waitFor();
    await snap('csrs-zh');
    await page.getByRole('navigation').getByRole('link', { name: '节点' }).click();
    await page.getByRole('heading', { name: 'lab 的节点', level: 1 }).waitFor();
    await page.getByRole('link', { name: '录入节点' }).first().waitFor();
    await snap('nodes-zh');
  });

  it('removes the joined node (移除节点) after a preview and a typed confirmation, following it live', async () => {
    const host = world.lab.hosts[0];
    // A pod no controller recreates, and a managed one keeping data in an emptyDir: each is lost
    // to one forceful option only.
    const pods = world.sim.resource('pods');
    world.sim.api.seed(pods, { metadata: { namespace: 'default', name: 'bare-1' }, spec: { nodeName: host.hostname, containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Running' } });
    world.sim.api.seed(pods, {
      metadata: { namespace: 'default', name: 'cache-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'cache', uid: 'd1f0c7e2-0000-4000-8000-0000000000c1', controller: true }] },
      spec: { nodeName: host.hostname, containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'scratch', emptyDir: {} }] },
      status: { phase: 'Running' },
    });
    await page.goto(nodeUrl);
    await page.getByRole('main').getByRole('link', { name: '移除节点' }).click();
    await page.getByRole('heading', { name: `移除 ${host.hostname}`, level: 1 }).waitFor();
    // The safe side, as in the CLI: nothing is deleted for good unless ticked, and each option
    // names the pods it would delete before it is ticked.
    const force = page.getByLabel('强制（--force）');
    const emptyDir = page.getByLabel('删除 emptyDir 数据（--delete-emptydir-data）');
    expect(await force.isChecked()).toBe(false);
    expect(await emptyDir.isChecked()).toBe(false);
    await expect.poll(() => page.getByTestId('drain-command').textContent()).toBe(`oc adm drain ${host.hostname} --ignore-daemonsets --timeout=3600s`);
    await expect.poll(() => page.getByTestId('deletes-FORCE').textContent(), { timeout: 20_000 }).toBe('将删除：default/bare-1');
    await expect.poll(() => page.getByTestId('deletes-DELETE_EMPTY_DIR_DATA').textContent()).toBe('将删除：default/cache-1');
    // h1 is the cluster's only worker: refused until that is allowed explicitly.
    const preview = page.getByTestId('removal-preview');
    await preview.getByText('仍有其他 worker').waitFor();
    expect(await preview.locator('li.failed').count()).toBe(1);
    const submit = page.getByRole('button', { name: '移除节点' });
    await page.getByRole('textbox', { name: '输入节点名以确认' }).fill(host.hostname);
    expect(await submit.isDisabled()).toBe(true);
    await page.getByLabel('允许移除最后一个 worker').check();
    await force.check();
    await emptyDir.check();
    // The page redraws after each tick: wait for it rather than read at once.
    await expect.poll(() => page.getByTestId('drain-command').textContent()).toBe(`oc adm drain ${host.hostname} --force --delete-emptydir-data --ignore-daemonsets --timeout=3600s`);
    await expect.poll(() => preview.locator('li.failed').count(), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => submit.isDisabled(), { timeout: 20_000 }).toBe(false);
    await snap('remove-node-zh');
    await page.getByRole('button', { name: 'English' }).click();
    await snap('remove-node-en');
    await page.getByRole('button', { name: '简体中文' }).click();

    await page.evaluate(MARK_DOCUMENT);
    await submit.click();
    await page.getByRole('heading', { name: host.hostname, level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('removal-status').getAttribute('data-status'), { timeout: 120_000 }).toBe('SUCCEEDED');
    await expect.poll(() => page.getByTestId('node-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('REMOVED');
    expect(await page.evaluate(SAME_DOCUMENT)).toBe(true);
    const phases = await page.locator('ccos-removal-run li[data-step]').evaluateAll((items) => items.map((item) => item.getAttribute('data-state')));
    expect(phases.length).toBeGreaterThanOrEqual(5);
    expect(phases.every((state) => state === 'succeeded')).toBe(true);
    expect(world.sim.store.list(world.sim.resource('nodes')).some((node) => node.metadata.name === host.hostname)).toBe(false);
    await snap('node-removed-zh');
  });

  it('lets a VIEWER look at nodes but offers no action', async () => {
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('heading', { name: 'lab 的节点', level: 1 }).waitFor();
    const added = await world.gql<{ addNode: { id: string } }>('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', {
      input: { clusterId: world.clusterId, hostname: 'nobody', ip: world.lab.unassignedIps[0], password: 'irrelevant' },
    });
    const nobodyId = added.data?.addNode.id;
    expect(nobodyId).toBeTruthy();
    await world.waitForStatus(nobodyId ?? '', ['UNREACHABLE'], 30_000);
    const nobodyUrl = `${baseUrl}/clusters/${world.clusterId}/nodes/${nobodyId}`;
    const actionNames = ['安装节点', '重试安装', '取消安装', '重新复制 agent', '更新凭据', '接受新的主机密钥', '删除记录'];
    const actionButtons = () => page.getByRole('main').getByRole('button', { name: new RegExp(`^(${actionNames.join('|')})$`) });

    // The list followed the new node by itself; the admin sees what may be done to it.
    await page.getByRole('row').filter({ hasText: 'nobody' }).getByText('无法连接', { exact: true }).waitFor();
    await page.goto(nobodyUrl);
    await page.getByRole('heading', { name: 'nobody', level: 1 }).waitFor();
    await expect.poll(() => actionButtons().count()).toBe(3);
    await snap('node-unreachable-zh');

    await page.getByRole('button', { name: /^账户/ }).click();
    await page.getByRole('button', { name: '退出登录' }).click();
    await page.getByRole('heading', { name: '登录', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: '用户名' }).fill(VIEWER.username);
    await page.getByLabel(/^密码/).fill(VIEWER.password);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('heading', { name: '集群', level: 1 }).waitFor();

    await page.goto(nobodyUrl);
    await page.getByRole('heading', { name: 'nobody', level: 1 }).waitFor();
    await page.getByText('您可以查看此节点；由操作员执行操作。').waitFor();
    expect(await actionButtons().count()).toBe(0);
    await page.goto(nodeUrl);
    await page.getByRole('heading', { name: world.lab.hosts[0].hostname, level: 1 }).waitFor();
    expect(await actionButtons().count()).toBe(0);
    expect(await page.getByRole('button', { name: '下载诊断包' }).count()).toBe(0);

    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes`);
    await page.getByRole('heading', { name: 'lab 的节点', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: '录入节点' }).count()).toBe(0);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/csrs`);
    await page.getByRole('heading', { name: 'lab 的证书处理', level: 1 }).waitFor();
    await page.locator('ccos-csr-card').first().waitFor();
    expect(await page.getByRole('button', { name: /^(批准|拒绝)$/ }).count()).toBe(0);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/nodes/new`);
    await page.getByRole('heading', { name: '集群', level: 1 }).waitFor();
    await snap('viewer-redirected-zh');
  });

  it('raised no uncaught errors in the page', () => {
    expect(record.pageErrors).toEqual([]);
  });
});

async function stepState(step: string): Promise<string | null> {
  return page.locator(`li[data-step="${step}"]`).first().getAttribute('data-state');
}

/** Keeps a picture of each page for review (tmp/ is not committed). */
async function snap(name: string): Promise<void> {
  await screenshot(page, SCREENSHOTS, name);
}

