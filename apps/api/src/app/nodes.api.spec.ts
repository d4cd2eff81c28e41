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
