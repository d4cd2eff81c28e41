import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const ADD = 'mutation($input: AddNodeInput!) { addNode(input: $input) { id ip } }';
const ADD_NODES = 'mutation($input: AddNodesInput!) { addNodes(input: $input) { added rows { ip problems { field messageCode } } } }';

/** Each refused class by one address or more, and the code it is refused with. */
const REFUSED: ReadonlyArray<readonly [string, string]> = [
  ['127.0.0.2', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['169.254.10.10', 'link-local'],
  ['fe80::1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['::ffff:169.254.169.254', 'metadata'],
];

/**
 * Issue 25: addNode took loopback, unspecified and metadata addresses as SSH targets, so an
 * OPERATOR could point the service's SSH client (and a stored password) at the service's own
 * host or the cloud's metadata endpoint. The same switch as for cluster addresses
 * (ALLOW_CLUSTER_ADDRESSES) lets an ADMIN allow them.
 */
describe('SSH targets: loopback, unspecified, link-local and metadata addresses refused unless ALLOW_CLUSTER_ADDRESSES lists them', () => {
  let sim: KubeSim;
  let strict: ApiHarness;
  let allowing: ApiHarness;
  const clusterIds = new Map<ApiHarness, string>();
  let hostNumber = 0;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    // kube-sim listens on 127.0.0.1: allowing that one address keeps the rest of loopback refused.
    const common = { AGENT_BINARY: '/bin/true', SSH_CONNECT_TIMEOUT_MS: '1000' };
    [strict, allowing] = await Promise.all([
      startApiHarness({ ...common, ALLOW_CLUSTER_ADDRESSES: '127.0.0.1/32' }),
      startApiHarness({ ...common, ALLOW_CLUSTER_ADDRESSES: 'loopback,link-local,metadata' }),
    ]);
    for (const harness of [strict, allowing]) {
      clusterIds.set(harness, await harness.registerSimCluster(sim));
    }
  });
  afterAll(async () => {
    await Promise.all([strict?.stop(), allowing?.stop()]);
    await sim?.stop();
  });

  const add = async (harness: ApiHarness, ip: string) => {
    hostNumber += 1;
    // Port 1: whatever the background check reaches answers nothing.
    const input = { clusterId: clusterIds.get(harness), hostname: `t-${hostNumber}`, ip, sshPort: 1, sshUser: 'root', password: 'target-pw-1' };
    return harness.gql<{ addNode: { id: string } }>(ADD, { input }, await harness.tokenFor('OPERATOR'));
  };
  const nodeCount = async (harness: ApiHarness) => ((await harness.api.dataSource.query('SELECT count(*)::int AS n FROM nodes')) as Array<{ n: number }>)[0].n;

  it.each(REFUSED)('addNode refuses %s as a %s address with its own code, and stores nothing', async (ip, addressClass) => {
    const before = await nodeCount(strict);
    const result = await add(strict, ip);
    const extensions = result.errors?.[0]?.extensions ?? {};
    expect(extensions['code']).toBe('BAD_USER_INPUT');
    expect(extensions['field']).toBe('input.ip');
    expect(extensions['problemCode']).toBe(`ssh.addressRefused.${addressClass}`);
    expect(result.errors?.[0]?.message).toMatch(new RegExp(`^input\\.ip ${ip.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is .*which the service opens no SSH connection to; .*ALLOW_CLUSTER_ADDRESSES=`));
    expect(formatServerText('zh-CN', extensions['problemCode'] as string, extensions['problemParams'] as Record<string, unknown>, null)).toContain('服务不会向其发起 SSH 连接');
    expect(await nodeCount(strict)).toBe(before);
  });

  it('addNode takes an ordinary address (198.18.0.0/24, the lab\'s network) under the strict policy', async () => {
    const result = await add(strict, '198.18.0.77');
    expect(result.errors).toBeUndefined();
    expect(result.data?.addNode.id).toBeTruthy();
  });

  it('addNodes refuses each such row on its ip, and adds the others only when asked to', async () => {
    const before = await nodeCount(strict);
    const list = ['ok-1,198.18.0.78,1', 'bad-1,127.0.0.3,1', 'bad-2,169.254.169.254,1', 'bad-3,0.0.0.0,1'].join('\n');
    const result = await strict.gql<{ addNodes: { added: number; rows: Array<{ ip: string; problems: Array<{ field: string; messageCode: string | null }> }> } }>(
      ADD_NODES,
      { input: { clusterId: clusterIds.get(strict), password: 'pw', list } },
      await strict.tokenFor('OPERATOR'),
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.addNodes.added).toBe(0);
    expect(result.data?.addNodes.rows.map((row) => [row.ip, row.problems.map((problem) => `${problem.field}:${problem.messageCode}`)])).toEqual([
      ['198.18.0.78', []],
      ['127.0.0.3', ['ip:ssh.addressRefused.loopback']],
      ['169.254.169.254', ['ip:ssh.addressRefused.metadata']],
      ['0.0.0.0', ['ip:ssh.addressRefused.unspecified']],
    ]);
    expect(await nodeCount(strict)).toBe(before);
  });

  it.each(REFUSED)('addNode takes %s (%s) when the switch lists its range', async (ip) => {
    const result = await add(allowing, ip);
    expect(result.errors).toBeUndefined();
    expect(result.data?.addNode.id).toBeTruthy();
  });
});
