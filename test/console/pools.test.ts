import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E2E_ADMIN_PASSWORD, freePort } from '../support/api-process';
import { type CloudProviderClient, callProvider, cloudProviderClient } from '../support/autoscaler-client';
import { screenshot } from '../support/console-browser';
import { useConsoleWorld } from '../support/console-world';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The Pools page in Chromium while cluster-autoscaler (a client from the same externalgrpc.proto)
 * scales a node group up and down: the spares, the host installing then running, removed then
 * back in the pool, and each decision in the activity, all live without a reload.
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
        apiEnv: { AUTOSCALER_GRPC_PORT: String(grpcPort), AUTOSCALER_GRPC_HOST: '127.0.0.1', AUTOSCALER_GRPC_ADDRESS: `127.0.0.1:${grpcPort}` },
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

  it('shows a scale-up and a scale-down live: spares, installing, running, removed, back in the pool', async () => {
    const created = await world.gql<{ createNodeGroup: { id: string } }>('mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }', {
      input: { clusterId: world.clusterId, name: GROUP, minSize: 0, maxSize: 2, labels: [{ key: 'pool', value: 'ui' }], profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3 } },
    });
    const groupId = created.data?.createNodeGroup.id ?? '';
    expect(groupId).not.toBe('');
    for (const host of world.lab.hosts) {
      const added = await world.gql('mutation($input: AddSpareInput!) { addNodeGroupSpare(input: $input) { nodeId } }', {
        input: { groupId, hostname: host.hostname, ip: host.ip, sshPort: host.port, sshUser: host.user, password: host.password },
      });
      expect(added.errors).toBeUndefined();
    }
    const issued = await world.gql<{ issueAutoscalerConnection: { address: string; caCertificate: string; clientCertificate: string; clientKey: string } }>(
      'mutation($c: ID!) { issueAutoscalerConnection(clusterId: $c) { address caCertificate clientCertificate clientKey } }', { c: world.clusterId },
    );
    const connection = issued.data?.issueAutoscalerConnection;
    if (!connection) {
      throw new Error(JSON.stringify(issued.errors));
    }
    client = cloudProviderClient(connection.address, { ca: connection.caCertificate, cert: connection.clientCertificate, key: connection.clientKey });

    const baseUrl = `http://127.0.0.1:${world.api.port}`;
    await page.goto(`${baseUrl}/sign-in`);
    await page.getByRole('textbox', { name: 'User name' }).fill('admin');
    await page.getByLabel(/^Password/).fill(E2E_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    await page.goto(`${baseUrl}/clusters/${world.clusterId}/pools`);
    await page.getByRole('heading', { name: 'Pools', level: 1 }).waitFor();
    const group = page.locator(`section[data-group="${GROUP}"]`);
    const hosts = group.getByTestId('hosts');
    const states = () => hosts.locator('tbody tr').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-host')}=${row.getAttribute('data-state')}`).sort());
    await expect.poll(states, { timeout: 120_000 }).toEqual(['p-1=SPARE', 'p-2=SPARE']);
    await expect.poll(() => group.getByTestId('spares').textContent()).toBe('2 spare(s) ready');

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

    // Scale-down: the host is removed, checked again and back in the pool.
    const providerID = await installed.locator('code').textContent();
    await callProvider(client, 'NodeGroupDeleteNodes', { id: GROUP, nodes: [{ providerID, name: hostname }] });
    await expect.poll(() => group.getByTestId('activity').locator(`tr[data-kind="DELETE"]`).count()).toBe(1);
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
});
