import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const ADD = 'mutation($input: AddNodeInput!) { addNode(input: $input) { id labels { key value } } }';
const ADD_NODES = 'mutation($input: AddNodesInput!) { addNodes(input: $input) { added } }';
const CREATE_GROUP = 'mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }';

type GqlError = { message: string; extensions?: Record<string, unknown> };

/**
 * Issue 25: an OPERATOR holds the root password of the hosts it adds, so a control-plane role
 * label from it would draw control-plane workloads (and their tokens) to a machine it owns.
 */
describe('node-role labels: worker and ALLOW_NODE_ROLES for OPERATORs, any other role only from an ADMIN with a reason', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let clusterId = '';
  let host = 10;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    // Any file serves as the agent: the hosts' port 1 answers nobody, so their background checks end UNREACHABLE.
    harness = await startApiHarness({ AGENT_BINARY: '/bin/true', SSH_CONNECT_TIMEOUT_MS: '1000', ALLOW_NODE_ROLES: 'infra' });
    clusterId = await harness.registerSimCluster(sim);
  });
  afterAll(async () => {
    await harness?.stop();
    await sim?.stop();
  });

  const input = (labels: Array<{ key: string; value: string }>, extra: Record<string, unknown> = {}) => {
    host += 1;
    return { clusterId, hostname: `r-${host}`, ip: `198.18.0.${host}`, sshPort: 1, sshUser: 'root', password: 'pw', labels, ...extra };
  };
  const nodeCount = async () => ((await harness.api.dataSource.query('SELECT count(*)::int AS n FROM nodes')) as Array<{ n: number }>)[0].n;

  it.each([
    ['node-role.kubernetes.io/master', ''],
    ['node-role.kubernetes.io/control-plane', ''],
    ['node-role.kubernetes.io', 'master'],
    ['node-role.kubernetes.io/etcd', 'true'],
  ])('refuses an OPERATOR the label %s=%s, even with a reason, and creates nothing', async (key, value) => {
    const before = await nodeCount();
    const operator = await harness.tokenFor('OPERATOR');
    for (const extra of [{}, { roleLabelReason: 'I say so' }]) {
      const result = await harness.gql(ADD, { input: input([{ key: 'node-role.kubernetes.io/worker', value: '' }, { key, value }], extra) }, operator);
      const error = result.errors?.[0] as GqlError | undefined;
      expect(error?.extensions?.['code']).toBe('FORBIDDEN');
      expect(error?.extensions?.['requiredRole']).toBe('ADMIN');
      expect(error?.extensions?.['messageCode']).toBe('node.roleLabel.needsAdmin');
      expect(error?.message).toContain(`the label ${key} gives the node the role`);
      expect(error?.message).toContain('node-role.kubernetes.io/worker, node-role.kubernetes.io/infra');
      expect(formatServerText('zh-CN', 'node.roleLabel.needsAdmin', error?.extensions?.['messageParams'] as Record<string, unknown>, null)).toContain('只有管理员才能设置');
    }
    expect(await nodeCount()).toBe(before);
  });

  it('lets an OPERATOR set the worker role and the roles of ALLOW_NODE_ROLES', async () => {
    const operator = await harness.tokenFor('OPERATOR');
    const result = await harness.gql<{ addNode: { id: string } }>(ADD, { input: input([{ key: 'node-role.kubernetes.io/worker', value: '' }, { key: 'node-role.kubernetes.io/infra', value: '' }]) }, operator);
    expect(result.errors).toBeUndefined();
    expect(result.data?.addNode.id).toBeTruthy();
  });

  it('refuses an ADMIN a control-plane label without a reason, and creates nothing', async () => {
    const before = await nodeCount();
    const admin = await harness.tokenFor('ADMIN');
    for (const reason of [undefined, '   ', 'x'.repeat(501)]) {
      const result = await harness.gql(ADD, { input: input([{ key: 'node-role.kubernetes.io/master', value: '' }], reason === undefined ? {} : { roleLabelReason: reason }) }, admin);
      const error = result.errors?.[0] as GqlError | undefined;
      expect(error?.extensions?.['code']).toBe('BAD_USER_INPUT');
      expect(error?.extensions?.['field']).toBe('input.roleLabelReason');
    }
    const missing = await harness.gql(ADD, { input: input([{ key: 'node-role.kubernetes.io/master', value: '' }]) }, admin);
    expect(missing.errors?.[0]?.message).toBe('input.roleLabelReason is required with the label node-role.kubernetes.io/master: say why this node takes the role master (kept in the audit log)');
    expect(await nodeCount()).toBe(before);
  });

  it('accepts it from an ADMIN with a reason, and the audit entry keeps the reason', async () => {
    const admin = await harness.tokenFor('ADMIN');
    const reason = 'replacement for master-2, change CHG-4711';
    const added = input([{ key: 'node-role.kubernetes.io/master', value: '' }], { roleLabelReason: reason });
    const result = await harness.gql<{ addNode: { id: string; labels: Array<{ key: string }> } }>(ADD, { input: added }, admin);
    expect(result.errors).toBeUndefined();
    expect(result.data?.addNode.labels.map((label) => label.key)).toEqual(['node-role.kubernetes.io/master']);
    const audit = (await harness.api.dataSource.query(`SELECT actor, result, detail FROM audit_log WHERE action = 'addNode' AND detail::text LIKE $1`, [`%${added.hostname}%`])) as Array<{ actor: string; result: string; detail: { args: { input: Record<string, unknown> } } }>;
    expect(audit).toHaveLength(1);
    expect(audit[0].result).toBe('SUCCESS');
    expect(audit[0].actor).toBe('admin');
    expect(audit[0].detail.args.input['roleLabelReason']).toBe(reason);
  });

  it('holds for bulk adds and node groups too', async () => {
    const before = await nodeCount();
    const operator = await harness.tokenFor('OPERATOR');
    const admin = await harness.tokenFor('ADMIN');
    const list = 'b-1,198.18.0.91,1,root,node-role.kubernetes.io/worker=\nb-2,198.18.0.92,1,root,node-role.kubernetes.io/control-plane=';
    const bulk = await harness.gql(ADD_NODES, { input: { clusterId, password: 'pw', list, addValidRows: true } }, operator);
    expect(bulk.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect(bulk.errors?.[0]?.extensions?.['messageCode']).toBe('node.roleLabel.needsAdmin');
    const ranged = await harness.gql(ADD_NODES, { input: { clusterId, password: 'pw', range: { range: '198.18.0.93-198.18.0.94', hostnamePattern: 'c-{n}' }, sshPort: 1, labels: [{ key: 'node-role.kubernetes.io/master', value: '' }] } }, admin);
    expect(ranged.errors?.[0]?.extensions?.['field']).toBe('input.roleLabelReason');
    expect(await nodeCount()).toBe(before);

    const group = { clusterId, name: 'cp-spares', maxSize: 2, labels: [{ key: 'node-role.kubernetes.io/master', value: '' }], profile: { cpuCores: 4, memoryBytes: 8 * 1024 ** 3 } };
    const refused = await harness.gql(CREATE_GROUP, { input: group }, admin);
    expect(refused.errors?.[0]?.extensions?.['field']).toBe('input.roleLabelReason');
    const created = await harness.gql<{ createNodeGroup: { id: string } }>(CREATE_GROUP, { input: { ...group, roleLabelReason: 'spare control-plane capacity' } }, admin);
    expect(created.errors).toBeUndefined();
  });
});
