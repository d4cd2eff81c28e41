import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const ADD = 'mutation($input: AddNodeInput!) { addNode(input: $input) { id status } }';
const UNKNOWN = '6f1c1d7e-0000-4000-8000-000000000000';

describe('nodes and installs over GraphQL: roles and input checks', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let clusterId = '';

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    // No agent executable: addNode must refuse instead of storing a node it cannot provision.
    harness = await startApiHarness({ AGENT_BINARY: '/nonexistent/boot-worker' });
    clusterId = await harness.registerSimCluster(sim);
  });
  afterAll(async () => {
    await harness?.stop();
    await sim?.stop();
  });

  const input = (overrides: Record<string, unknown> = {}) => ({ clusterId, hostname: 'w1', ip: '198.18.0.11', sshUser: 'root', password: 'pw', ...overrides });

  const operations: Array<{ name: string; needs: 'VIEWER' | 'OPERATOR' | 'ADMIN'; query: string; variables: () => Record<string, unknown> }> = [
    { name: 'nodes', needs: 'VIEWER', query: 'query($c: ID!) { nodes(clusterId: $c) { id } }', variables: () => ({ c: clusterId }) },
    { name: 'node', needs: 'VIEWER', query: 'query($id: ID!) { node(id: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'installRun', needs: 'VIEWER', query: 'query($id: ID!) { installRun(id: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'addNode', needs: 'OPERATOR', query: ADD, variables: () => ({ input: input() }) },
    { name: 'updateNodeCredentials', needs: 'OPERATOR', query: 'mutation($id: ID!) { updateNodeCredentials(nodeId: $id, input: { sshUser: "root", password: "x" }) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'recopyAgent', needs: 'OPERATOR', query: 'mutation($id: ID!) { recopyAgent(nodeId: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'deleteNodeRecord', needs: 'OPERATOR', query: 'mutation($id: ID!) { deleteNodeRecord(nodeId: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'installNode', needs: 'OPERATOR', query: 'mutation($id: ID!) { installNode(nodeId: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'retryInstall', needs: 'OPERATOR', query: 'mutation($id: ID!) { retryInstall(nodeId: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'cancelInstall', needs: 'OPERATOR', query: 'mutation($id: ID!) { cancelInstall(nodeId: $id) { id } }', variables: () => ({ id: UNKNOWN }) },
    { name: 'acceptHostKey', needs: 'ADMIN', query: 'mutation($id: ID!) { acceptHostKey(nodeId: $id, fingerprint: "SHA256:x") { id } }', variables: () => ({ id: UNKNOWN }) },
  ];
  const rank = { VIEWER: 0, OPERATOR: 1, ADMIN: 2 } as const;
  const cases = operations.flatMap((operation) => (['anonymous', 'VIEWER', 'OPERATOR', 'ADMIN'] as const).map((caller) => ({ ...operation, caller })));

  it.each(cases)('$name as $caller', async ({ query, variables, needs, caller }) => {
    const token = caller === 'anonymous' ? null : await harness.tokenFor(caller);
    const result = await harness.gql(query, variables(), token);
    const code = result.errors?.[0]?.extensions?.['code'];
    if (caller === 'anonymous') {
      expect(code).toBe('UNAUTHENTICATED');
    } else if (rank[caller] < rank[needs]) {
      expect(result.errors?.[0]?.message).toBe(`this operation needs the ${needs} role; you are ${caller}`);
    } else {
      expect(['UNAUTHENTICATED', 'FORBIDDEN']).not.toContain(code);
    }
  });

  it('refuses to re-add a name removed after it joined, unless an ADMIN acknowledges its old certificates may still be valid', async () => {
    // worker-gone joined this cluster and was removed a month ago: its machine may still hold certificates for the name.
    await harness.api.dataSource.query(
      `INSERT INTO nodes (id, cluster_id, hostname, ip, status, ever_joined, updated_at) VALUES (gen_random_uuid(), $1, 'worker-gone', '198.18.0.77', 'REMOVED', true, now() - interval '30 days')`,
      [clusterId],
    );
    const operator = await harness.tokenFor('OPERATOR');
    const admin = await harness.tokenFor('ADMIN');
    const again = input({ hostname: 'worker-gone', ip: '198.18.0.78' });
    for (const token of [operator, admin]) {
      const refused = await harness.gql(ADD, { input: again }, token);
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'OLD_CERTIFICATES_MAY_BE_VALID', field: 'input.acknowledgeOldCertificates', acknowledgeWith: 'acknowledgeOldCertificates', messageCode: 'node.oldCertificatesMayBeValid' });
      expect(refused.errors?.[0]?.message).toContain('removing a node cannot revoke certificates');
    }
    const byOperator = await harness.gql(ADD, { input: { ...again, acknowledgeOldCertificates: true } }, operator);
    expect(byOperator.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', requiredRole: 'ADMIN', messageCode: 'node.oldCertificatesNeedAdmin' });
    // An ADMIN's acknowledgement gets past this check (to the next: this service has no agent to copy here).
    const byAdmin = await harness.gql(ADD, { input: { ...again, acknowledgeOldCertificates: true } }, admin);
    expect(byAdmin.errors?.[0]?.extensions?.['reason']).toBeUndefined();
    expect(byAdmin.errors?.[0]?.extensions?.['messageCode']).not.toMatch(/^node\.oldCertificates/);
    // A batch cannot acknowledge it: the row is refused with the same reason, and nothing is added.
    const batch = await harness.gql<{ addNodes: { added: number; rows: Array<{ hostname: string; problems: Array<{ field: string; messageCode: string | null }> }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { added rows { hostname problems { field messageCode } } } }',
      { input: { clusterId, list: 'worker-gone 198.18.0.78', password: 'pw' } },
      admin,
    );
    expect(batch.data?.addNodes.added).toBe(0);
    expect(batch.data?.addNodes.rows[0]?.problems).toContainEqual({ field: 'hostname', messageCode: 'node.oldCertificatesMayBeValid' });
    // A name removed longer ago than a certificate lives, or that never joined, needs nothing.
    await harness.api.dataSource.query(
      `INSERT INTO nodes (id, cluster_id, hostname, ip, status, ever_joined, updated_at) VALUES (gen_random_uuid(), $1, 'worker-ancient', '198.18.0.79', 'REMOVED', true, now() - interval '400 days')`,
      [clusterId],
    );
    const ancient = await harness.gql(ADD, { input: input({ hostname: 'worker-ancient', ip: '198.18.0.80' }) }, operator);
    expect(ancient.errors?.[0]?.extensions?.['reason']).toBeUndefined();
    // The other tests count what is stored.
    await harness.api.dataSource.query(`DELETE FROM nodes WHERE hostname IN ('worker-gone', 'worker-ancient')`);
  });

  it.each(['reportStep', 'agentRun'])('%s answers agents only: a user session is not an agent token', async (operation) => {
    const query =
      operation === 'agentRun'
        ? '{ agentRun { runId } }'
        : `mutation { reportStep(input: { runId: "${UNKNOWN}", seq: 1, step: PREFLIGHT, status: STARTED, occurredAt: "2026-01-01T00:00:00Z" }) { accepted } }`;
    for (const caller of ['ADMIN', 'VIEWER'] as const) {
      const result = await harness.gql(query, {}, await harness.tokenFor(caller));
      expect(result.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    }
  });

  it.each([
    ['no credentials', { password: null }, 'BAD_USER_INPUT', /^input\.password or input\.privateKey is required/],
    ['both a password and a key', { privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----' }, 'BAD_USER_INPUT', /^input\.privateKey must not be given together with input\.password/],
    ['a key that is not a key', { password: null, privateKey: 'hello' }, 'BAD_USER_INPUT', /^input\.privateKey is not a PEM or OpenSSH private key/],
    ['a passphrase without a key', { passphrase: 'x' }, 'BAD_USER_INPUT', /^input\.passphrase only applies to input\.privateKey/],
    ['an unknown cluster', { clusterId: UNKNOWN }, 'NOT_FOUND', /^cluster .* does not exist/],
    ['no agent executable to copy', {}, 'FAILED_PRECONDITION', /no agent executable/],
  ])('refuses %s and stores nothing', async (_case, overrides, code, message) => {
    const result = await harness.gql(ADD, { input: input(overrides) }, await harness.tokenFor('OPERATOR'));
    expect(result.errors?.[0]?.extensions?.['code']).toBe(code);
    expect(result.errors?.[0]?.message).toMatch(message);
    expect(await harness.api.dataSource.query('SELECT count(*)::int AS n FROM nodes')).toEqual([{ n: 0 }]);
  });
});
