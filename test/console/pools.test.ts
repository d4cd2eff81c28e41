import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/api-process';
import { type CloudProviderClient, callProvider, cloudProviderClient } from '../support/autoscaler-client';
import { descriptionOf, screenshot, signInAsAdmin } from '../support/console-browser';
import { useConsoleWorld } from '../support/console-world';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The Pools page in Chromium while cluster-autoscaler (a client from the same externalgrpc.proto)
 * scales a node group up and down: the spares, the host installing then running, removed then
 * back in the pool, and each decision in the activity, all live without a reload. Then
 * remediation's last rung: a member whose host is gone is replaced by the pool's other spare.
 */

const SCREENSHOTS = 'tmp/console-pools-e2e';
const GROUP = 'pool-ui';

let world: ScaleOutWorld;
let page: Page;
let client: CloudProviderClient;

describe('console: the Pools page', () => {
  const shared = useConsoleWorld({
    start: async () => {
      const grpcPort = await freePort('127.0.0.1');
      return startScaleOutWorld({
        hosts: 2,
        name: 'console-pools',
        hostnamePrefix: 'p-',
        csrAutoApprove: true,
        apiEnv: {
          AUTOSCALER_GRPC_PORT: String(grpcPort),
          AUTOSCALER_GRPC_HOST: '127.0.0.1',
          AUTOSCALER_GRPC_ADDRESS: `127.0.0.1:${grpcPort}`,
          // The second case: a member whose host is gone is found within seconds and remediated.
          HEALTH_CHECK_INTERVAL_SECONDS: '5',
          REMEDIATION_INTERVAL_SECONDS: '2',
        },
      });
    },
    screenshots: SCREENSHOTS,
    startTimeoutMs: 600_000,
  });
  beforeAll(() => {
    ({ world, page } = shared);
  });

  // Before the world stops (hooks registered later run first on the way out).
  afterAll(() => {
    client?.close();
  });

  it('creates a pool and adds its spares through the page, then shows a scale-up by the autoscaler and a scale-down by hand live: spares, installing, running, removed, back in the pool', async () => {
    const issued = await world.gql<{ issueAutoscalerConnection: { address: string; caCertificate: string; clientCertificate: string; clientKey: string } }>(
      'mutation($c: ID!) { issueAutoscalerConnection(clusterId: $c) { address caCertificate clientCertificate clientKey } }', { c: world.clusterId },
    );
    const connection = issued.data?.issueAutoscalerConnection;
    if (!connection) {
      throw new Error(JSON.stringify(issued.errors));
    }
    client = cloudProviderClient(connection.address, { ca: connection.caCertificate, cert: connection.clientCertificate, key: connection.clientKey });

    const baseUrl = `http://127.0.0.1:${world.api.port}`;
    await signInAsAdmin(page, baseUrl);
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/pools`);
    await page.getByRole('heading', { name: 'Pools', level: 1 }).waitFor();
    await page.getByText('No node groups in this cluster').waitFor();

    // The pool, through its dialog: a number that is none is said at once, the API's refusal next to its field.
    await page.getByRole('button', { name: 'Create pool' }).click();
    const create = page.getByRole('dialog', { name: 'Create a pool' });
    await create.getByRole('textbox', { name: 'Name' }).fill('Pool UI!');
    await create.getByRole('textbox', { name: 'Maximum' }).fill('two');
    await create.getByRole('button', { name: 'Create pool' }).click();
    await create.getByText('Enter a whole number (0 or more)').waitFor();
    await create.getByRole('textbox', { name: 'Maximum' }).fill('2');
    await create.getByRole('button', { name: 'Create pool' }).click();
    await expect.poll(() => descriptionOf(create.getByRole('textbox', { name: 'Name' }))).toContain('must be 1..63 lower-case letters, digits and inner dashes');
    await create.getByRole('textbox', { name: 'Name' }).fill(GROUP);
    // What the lab's hosts have: a spare below the pool's profile would be left out.
    await create.getByRole('textbox', { name: 'CPU cores per node' }).fill('2');
    await create.getByRole('textbox', { name: 'Memory per node (GiB)' }).fill('4');
    await create.getByRole('button', { name: 'Create pool' }).click();
    await create.waitFor({ state: 'detached' });
    const group = page.locator(`section[data-group="${GROUP}"]`);
    await expect.poll(() => group.getByTestId('sizes').textContent()).toMatch(/^Target 0 · current 0 · min 0 · max 2$/);

    for (const host of world.lab.hosts) {
      await group.getByRole('button', { name: 'Add spare' }).click();
      const spare = page.getByRole('dialog', { name: `Add a spare host to ${GROUP}` });
      await spare.getByRole('textbox', { name: 'Host name' }).fill(host.hostname);
      await spare.getByRole('textbox', { name: 'IP address' }).fill(host.ip);
      await spare.getByRole('textbox', { name: 'SSH port' }).fill(String(host.port));
      await spare.getByLabel(/^Password/).fill(host.password);
      await spare.getByRole('button', { name: 'Add spare' }).click();
      await spare.waitFor({ state: 'detached' });
    }
    const hosts = group.getByTestId('hosts');
    const states = () => hosts.locator('tbody tr').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-host')}=${row.getAttribute('data-state')}`).sort());
    await expect.poll(states, { timeout: 120_000 }).toEqual(['p-1=SPARE', 'p-2=SPARE']);
    await expect.poll(() => group.getByTestId('spares').textContent()).toBe('2 spare(s) ready');
    expect(await group.getByTestId('activity').locator('tr[data-kind="SPARE_ADDED"] td').nth(4).textContent()).toBe('admin');

    // Scale-up by the autoscaler: the page follows without a reload.
    await callProvider(client, 'NodeGroupIncreaseSize', { id: GROUP, delta: 1 });
    await expect.poll(() => hosts.locator('tr[data-state="RESERVED"], tr[data-state="RUNNING"]').count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => group.getByTestId('sizes').textContent()).toMatch(/^Target 1 · current 1 · min 0 · max 2$/);
    const installed = hosts.locator('tr[data-state="RUNNING"]');
    await installed.waitFor({ timeout: 300_000 });
    const hostname = await installed.getAttribute('data-host');
    expect(await installed.locator('code').textContent()).toMatch(/^ccos:\/\/lab\/[0-9a-f-]{36}$/);
    await expect.poll(() => group.getByTestId('activity').locator('tr[data-kind="INSTALLED"] td').nth(1).textContent()).toBe('Joined');
    await screenshot(page, SCREENSHOTS, 'scaled-up-en');

    // Scale-down by hand: the host is removed, checked again and back in the pool.
    await installed.getByRole('button', { name: 'Scale down' }).click();
    const scaleDown = page.getByRole('dialog', { name: `Remove ${hostname ?? ''} from ${GROUP}` });
    expect(await scaleDown.textContent()).toContain(`The target of ${GROUP} goes from 1 to 0`);
    await scaleDown.getByRole('button', { name: 'Scale down' }).click();
    await scaleDown.waitFor({ state: 'detached' });
    await expect.poll(() => group.getByTestId('activity').locator(`tr[data-kind="DELETE"]`).count()).toBe(1);
    expect(await group.getByTestId('activity').locator('tr[data-kind="DELETE"] td').nth(4).textContent()).toBe('admin');
    await expect.poll(() => group.getByTestId('activity').locator('tr[data-kind="RETURN_TO_POOL"]').count(), { timeout: 300_000 }).toBe(1);
    await expect.poll(states).toEqual(['p-1=SPARE', 'p-2=SPARE']);
    await expect.poll(() => group.getByTestId('sizes').textContent()).toMatch(/^Target 0 · current 0/);
    expect(await group.getByTestId('activity').locator('tr[data-kind="RETURN_TO_POOL"] td').nth(2).textContent()).toBe(hostname);
    await screenshot(page, SCREENSHOTS, 'scaled-down-en');

    // The same page in Chinese.
    await page.getByRole('button', { name: '简体中文' }).click();
    await page.getByRole('heading', { name: '资源池', level: 1 }).waitFor();
    await expect.poll(() => group.getByTestId('activity').locator('tr[data-kind="RETURN_TO_POOL"] td').nth(1).textContent()).toBe('已回到资源池');
    await screenshot(page, SCREENSHOTS, 'scaled-down-zh');
  }, 900_000);

  it('replaces a member whose host stays unreachable through a kubelet restart and a reboot with the other spare; the broken host is left out, reinstall required', async () => {
    const group = page.locator(`section[data-group="${GROUP}"]`);
    const hosts = group.getByTestId('hosts');
    await page.getByRole('button', { name: 'English' }).click();
    await callProvider(client, 'NodeGroupIncreaseSize', { id: GROUP, delta: 1 });
    const running = hosts.locator('tr[data-state="RUNNING"]');
    await running.waitFor({ timeout: 300_000 });
    const brokenName = (await running.getAttribute('data-host')) ?? '';
    const spareName = brokenName === 'p-1' ? 'p-2' : 'p-1';
    const nodeIdOf = async (hostname: string) =>
      (await world.gql<{ nodes: Array<{ id: string; hostname: string; status: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname status } }', { c: world.clusterId })).data?.nodes.find(
        (node) => node.hostname === hostname && node.status !== 'REMOVED' && node.status !== 'READY_TO_INSTALL',
      )?.id ?? '';
    const brokenId = await nodeIdOf(brokenName);
    expect(brokenId).not.toBe('');
    const policy = await world.gql('mutation($c: ID!, $input: RemediationPolicyInput!) { setRemediationPolicy(clusterId: $c, input: $input) { policy { enabled } } }', {
      c: world.clusterId,
      input: { enabled: true, paused: false, unhealthySeconds: 5, rungTimeoutSeconds: 10, maxUnhealthy: 1, maxUnhealthyIsPercent: false },
    });
    expect(policy.errors).toBeUndefined();

    // The host goes away: its kubelet stops and SSH refuses.
    const broken = world.lab.hosts.find((host) => host.hostname === brokenName);
    if (!broken) {
      throw new Error(`no lab host ${brokenName}`);
    }
    expect((await world.lab.exec(broken.id, ['systemctl', 'stop', 'kubelet'])).code).toBe(0);
    await world.lab.faults.stopSshd(broken.id);

    await expect.poll(async () => (await hosts.locator('tbody tr').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-host')}=${row.getAttribute('data-state')}`).sort())), { timeout: 240_000 }).toEqual([
      `${brokenName}=REINSTALL_REQUIRED`,
      `${spareName}=RUNNING`,
    ].sort());
    await expect.poll(() => group.getByTestId('activity').locator('tr[data-kind="REINSTALL_REQUIRED"] td').nth(2).textContent()).toBe(brokenName);
    await screenshot(page, SCREENSHOTS, 'replaced-en');

    // Each rung audited by the remediation actor, in order (the reboot never reached the host), and the pool's decisions in its name.
    const audit = await world.gql<{ auditLog: { entries: Array<{ action: string; targetId: string | null; result: string }> } }>('{ auditLog(first: 200, filter: { actor: "remediation" }) { entries { action targetId result } } }');
    expect(audit.data?.auditLog.entries.filter((entry) => entry.targetId === brokenId).map((entry) => `${entry.action}:${entry.result}`).reverse()).toEqual([
      'remediation.restart_kubelet:FAILURE',
      'remediation.reboot:FAILURE',
      'autoscaling.delete:SUCCESS',
      'remediation.replace:SUCCESS',
      'autoscaling.reinstall_required:SUCCESS',
    ]);
    const removed = await world.gql<{ node: { status: string; reinstallRequired: string | null } }>('query($id: ID!) { node(id: $id) { status reinstallRequired } }', { id: brokenId });
    expect(removed.data?.node).toMatchObject({ status: 'REMOVED', reinstallRequired: expect.stringContaining('the host did not answer through a kubelet restart and a reboot') });
    const replacement = await world.gql<{ node: { status: string; ready: boolean } }>('query($id: ID!) { node(id: $id) { status ready } }', { id: await nodeIdOf(spareName) });
    expect(replacement.data?.node).toMatchObject({ status: 'JOINED', ready: true });
    await expect.poll(() => group.getByTestId('sizes').textContent()).toMatch(/^Target 1 · current 1/);
  }, 600_000);
});
