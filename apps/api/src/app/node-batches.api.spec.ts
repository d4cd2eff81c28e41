import 'reflect-metadata';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness, writeStandInArtifactSet } from '../testing/api-test-harness';

const ADD_NODES = `mutation($input: AddNodesInput!) { addNodes(input: $input) {
  added refused problems { field message }
  rows { line hostname ip sshPort sshUser labels { key value } taints { key value effect } problems { field message } nodeId }
  batch { id state concurrency progress { total added } hosts { position hostname ip phase status } }
} }`;
const BATCH = 'query($id: ID!) { batch(id: $id) { id state progress { total added queued installing joined failed cancelled waitingForOperator } hosts { position hostname phase } } }';
const SHARED_PASSWORD = 'shared-rack-password-7';

interface AddNodesResult {
  addNodes: {
    added: number;
    refused: number;
    problems: Array<{ field: string; message: string }>;
    rows: Array<{ line: number; hostname: string; ip: string; sshPort: number; sshUser: string; problems: Array<{ field: string; message: string }>; nodeId: string | null; labels: unknown[]; taints: unknown[] }>;
    batch: { id: string; state: string; concurrency: number; progress: { total: number; added: number }; hosts: Array<{ position: number; hostname: string; ip: string; phase: string; status: string }> } | null;
  };
}

describe('addNodes: many hosts in one request, every row checked first', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let clusterId = '';
  let operator = '';

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    // Any file serves as the agent here: the hosts are on loopback ports nobody listens on, so
    // their background checks end UNREACHABLE without leaving the machine.
    const artifacts = await writeStandInArtifactSet(await mkdtemp(join(tmpdir(), 'ccos-batch-artifacts-')));
    harness = await startApiHarness({ AGENT_BINARY: '/bin/true', SSH_CONNECT_TIMEOUT_MS: '1000', ARTIFACTS_DIR: artifacts });
    clusterId = await harness.registerSimCluster(sim);
    operator = await harness.tokenFor('OPERATOR');
  });
  afterAll(async () => {
    await harness?.stop();
    await sim?.stop();
  });

  const addNodes = (input: Record<string, unknown>, token = operator) => harness.gql<AddNodesResult>(ADD_NODES, { input: { clusterId, password: SHARED_PASSWORD, ...input } }, token);
  const nodeCount = async () => ((await harness.api.dataSource.query('SELECT count(*)::int AS n FROM nodes')) as Array<{ n: number }>)[0].n;

  it('returns every problem of every row at once and stores nothing while one row has a problem', async () => {
    const list = [
      'hostname,ip,port,user,labels,taints',
      'w-1,127.0.0.11,1,root,zone=a,',
      'w-2,127.0.0.300,1',
      'w-1,127.0.0.13,1',
      '$(reboot),127.0.0.14,1,root;id',
      'w-5,127.0.0.11,1,,,gpu',
    ].join('\n');
    const result = await addNodes({ list });
    expect(result.errors).toBeUndefined();
    const out = result.data?.addNodes;
    expect(out?.batch).toBeNull();
    expect(out?.added).toBe(0);
    expect(out?.refused).toBe(5);
    expect(out?.rows.map((row) => [row.line, row.problems.map((problem) => problem.field)])).toEqual([
      [2, ['hostname', 'ip']],
      [3, ['ip']],
      [4, ['hostname']],
      [5, ['hostname', 'sshUser']],
      [6, ['taints', 'ip']],
    ]);
    expect(out?.rows[0].problems[0].message).toBe('"w-1" is also on line 4 of this list');
    // Each row's problem by its code: the console words it in the user's language.
    const coded = await harness.gql<{ addNodes: { rows: Array<{ problems: Array<{ message: string; messageCode: string | null; messageParams: unknown }> }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { rows { problems { message messageCode messageParams } } } }',
      { input: { clusterId, password: SHARED_PASSWORD, list } },
      operator,
    );
    const [alsoOnLine, badIp] = coded.data?.addNodes.rows[0]?.problems ?? [];
    expect(formatServerText('zh-CN', alsoOnLine?.messageCode, alsoOnLine?.messageParams, null)).toBe('"w-1" 也出现在此列表的第 4 行');
    expect(formatServerText('en', badIp?.messageCode, badIp?.messageParams, null)).toBe(badIp?.message);
    expect(await nodeCount()).toBe(0);
  });

  it('expands a range with a hostname pattern in a dry run without storing anything', async () => {
    const result = await addNodes({ range: { range: '127.0.0.20-127.0.0.29', hostnamePattern: 'w-{n}' }, sshPort: 1, dryRun: true, labels: [{ key: 'rack', value: 'r7' }] });
    const out = result.data?.addNodes;
    expect(out?.rows.map((row) => `${row.hostname}@${row.ip}:${row.sshPort}`)).toEqual(Array.from({ length: 10 }, (_, index) => `w-${index + 1}@127.0.0.${20 + index}:1`));
    expect(out?.rows.every((row) => row.problems.length === 0 && JSON.stringify(row.labels) === '[{"key":"rack","value":"r7"}]')).toBe(true);
    expect(out?.batch).toBeNull();
    expect(await nodeCount()).toBe(0);
    const bad = await addNodes({ range: { range: '127.0.0.29-127.0.0.20', hostnamePattern: 'w-{n}' } });
    expect(bad.data?.addNodes.problems).toEqual([{ field: 'row', message: 'the range ends (127.0.0.20) before it starts (127.0.0.29)' }]);
    const coded = await harness.gql<{ addNodes: { problems: Array<{ messageCode: string; messageParams: Record<string, unknown> }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { problems { messageCode messageParams } } }',
      { input: { clusterId, range: { range: '127.0.0.29-127.0.0.20', hostnamePattern: 'w-{n}' }, sshPort: 1, password: 'pw', dryRun: true } },
      operator,
    );
    const problem = coded.data?.addNodes.problems[0];
    expect(formatServerText('zh-CN', problem?.messageCode, problem?.messageParams, null)).toBe('范围的结束地址（127.0.0.20）在起始地址（127.0.0.29）之前');
  });

  it('names the field of a credentials problem once, by code', async () => {
    const bad = await harness.gql<{ addNodes: { problems: Array<{ field: string; message: string; messageCode: string | null; messageParams: Record<string, unknown> | null }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { problems { field message messageCode messageParams } } }',
      { input: { clusterId, list: 'k-1 127.0.0.41', sshPort: 1, privateKey: 'not a key', dryRun: true } },
      operator,
    );
    expect(bad.errors).toBeUndefined();
    const [problem] = bad.data?.addNodes.problems ?? [];
    expect(problem?.field).toBe('credentials');
    expect(problem?.message).toBe('privateKey is not a PEM or OpenSSH private key (-----BEGIN … PRIVATE KEY-----)');
    expect(problem?.messageCode).toBe('error.badInput');
    expect(problem?.messageParams).toEqual({ field: 'privateKey', problem: { code: 'node.privateKeyInvalid', params: {} } });
    expect(formatServerText('zh-CN', problem?.messageCode, problem?.messageParams, null)).toBe('privateKey：不是 PEM 或 OpenSSH 格式的私钥（-----BEGIN … PRIVATE KEY-----）');
  });

  it('with addValidRows adds the passing rows in one batch, sealing the shared password once, and reports the others', async () => {
    const result = await addNodes({ list: 'a-1 127.0.0.41 1\na-2 127.0.0.42 1\nA_3 127.0.0.43 1\na-4 127.0.0.44 1', addValidRows: true });
    expect(result.errors).toBeUndefined();
    const out = result.data?.addNodes;
    expect(out?.added).toBe(3);
    expect(out?.refused).toBe(1);
    expect(out?.rows[2].problems[0].field).toBe('hostname');
    expect(out?.rows[2].nodeId).toBeNull();
    expect(out?.batch?.hosts.map((host) => `${host.position}:${host.hostname}:${host.phase}`)).toEqual(['1:a-1:ADDED', '2:a-2:ADDED', '3:a-4:ADDED']);
    expect(out?.batch?.progress).toEqual({ total: 3, added: 3 });
    const sealed = (await harness.api.dataSource.query('SELECT DISTINCT ssh_credentials_sealed AS s FROM nodes WHERE batch_id = $1', [out?.batch?.id])) as Array<{ s: string }>;
    expect(sealed).toHaveLength(1);
    expect(sealed[0].s).not.toContain(SHARED_PASSWORD);
    const audit = (await harness.api.dataSource.query("SELECT detail::text AS d, result FROM audit_log WHERE action = 'addNodes' ORDER BY id DESC LIMIT 1")) as Array<{ d: string; result: string }>;
    expect(audit[0].result).toBe('SUCCESS');
    expect(audit[0].d).toContain('[redacted]');

    // The same names or addresses again: refused as already in the cluster.
    const again = await addNodes({ rows: [{ hostname: 'a-1', ip: '127.0.0.51', sshPort: 1 }, { hostname: 'b-1', ip: '127.0.0.42', sshPort: 1, password: 'own-password-9' }] });
    expect(again.errors).toBeUndefined();
    expect(again.data?.addNodes.rows.map((row) => row.problems.map((problem) => problem.message))).toEqual([
      ['"a-1" is already a node of this cluster'],
      ['127.0.0.42 is already used by a node of this cluster'],
    ]);

    // Each host's checks run on its own: all three end UNREACHABLE, the batch still ADDED (no install asked).
    const batchId = out?.batch?.id ?? '';
    const deadline = Date.now() + 60_000;
    let statuses: string[] = [];
    while (Date.now() < deadline) {
      statuses = ((await harness.api.dataSource.query('SELECT status FROM nodes WHERE batch_id = $1', [batchId])) as Array<{ status: string }>).map((row) => row.status);
      if (statuses.every((status) => status === 'UNREACHABLE')) {
        break;
      }
      await new Promise((wake) => setTimeout(wake, 200));
    }
    expect(statuses).toEqual(['UNREACHABLE', 'UNREACHABLE', 'UNREACHABLE']);

    // One host added on its own under a taken name: a field error by its code, worded by the client.
    const single = await harness.gql('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', { input: { clusterId, hostname: 'a-1', ip: '127.0.0.61', sshPort: 1, sshUser: 'root', password: 'pw' } }, operator);
    const taken = single.errors?.[0];
    expect(taken?.message).toBe('input.hostname "a-1" is already a node of this cluster (UNREACHABLE)');
    expect(taken?.extensions).toMatchObject({ code: 'CONFLICT', field: 'input.hostname', problemCode: 'node.hostnameTaken' });
    expect(formatServerText('zh-CN', taken?.extensions?.['problemCode'] as string, taken?.extensions?.['problemParams'], null)).toBe('“a-1”已是此集群的节点（无法连接）');
    expect(formatServerText('zh-CN', taken?.extensions?.['messageCode'] as string, taken?.extensions?.['messageParams'], null)).toBe('input.hostname：“a-1”已是此集群的节点（无法连接）');

    // While the cluster's artifact set is incomplete (here: pinned to a release never imported), the batch is refused up front.
    const admin = await harness.tokenFor('ADMIN');
    await harness.gql('mutation($c: ID!) { setClusterArtifactVersion(clusterId: $c, version: "9.9.9") { kind } }', { c: clusterId }, admin);
    const refused = await harness.gql('mutation($id: ID!) { installBatch(batchId: $id) { id } }', { id: batchId }, operator);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', version: '9.9.9', missing: expect.arrayContaining(['binary/oc', 'unit/kubelet.service']) });
    expect(refused.errors?.[0]?.message).toMatch(/^the cluster has no artifact set for release 9\.9\.9; missing .*binary\/oc.*\. Import the release's set \(npm run artifacts -- import <folder\|tar>, or upload it as an ADMIN\) and install again\.$/);
    expect(formatServerText('zh-CN', refused.errors?.[0]?.extensions?.['messageCode'] as string, refused.errors?.[0]?.extensions?.['messageParams'], null)).toMatch(
      /^集群没有版本 9\.9\.9 的制品集；缺少 .*binary\/oc.*。请导入该版本的制品集（npm run artifacts -- import <folder\|tar>，或以 ADMIN 身份上传），然后重新安装。$/,
    );
    expect(((await harness.gql<{ batch: { state: string } }>(BATCH, { id: batchId }, operator)).data?.batch.state)).toBe('ADDED');
    await harness.gql('mutation($c: ID!) { setClusterArtifactVersion(clusterId: $c, version: null) { kind } }', { c: clusterId }, admin);

    // Installing the batch: hosts whose checks failed are failed in the batch, with their reason; retry queues them again.
    const install = await harness.gql<{ installBatch: { id: string } }>('mutation($id: ID!) { installBatch(batchId: $id, concurrency: 2) { id concurrency } }', { id: batchId }, operator);
    expect(install.errors).toBeUndefined();
    let batch: { state: string; progress: Record<string, number> } | undefined;
    const settled = Date.now() + 30_000;
    while (Date.now() < settled) {
      batch = (await harness.gql<{ batch: { state: string; progress: Record<string, number> } }>(BATCH, { id: batchId }, operator)).data?.batch;
      if (batch?.progress['failed'] === 3) {
        break;
      }
      await new Promise((wake) => setTimeout(wake, 200));
    }
    expect(batch?.state).toBe('NEEDS_ATTENTION');
    expect(batch?.progress).toMatchObject({ total: 3, failed: 3, queued: 0, installing: 0 });
    const cancelled = await harness.gql('mutation($id: ID!) { cancelRemaining(batchId: $id) { id } }', { id: batchId }, operator);
    expect(cancelled.errors?.[0]?.message).toBe('no host of this batch is waiting to install');
    const before = ((await harness.api.dataSource.query('SELECT max(updated_at) AS t FROM nodes WHERE batch_id = $1', [batchId])) as Array<{ t: Date }>)[0].t;
    const retried = await harness.gql('mutation($id: ID!) { retryFailed(batchId: $id) { id } }', { id: batchId }, operator);
    expect(retried.errors).toBeUndefined();
    // Each host connects again (and, nothing listening, fails again with its reason).
    const again2 = Date.now() + 30_000;
    let rows: Array<{ status: string; batch_phase: string; updated_at: Date; status_reason: string }> = [];
    while (Date.now() < again2) {
      rows = (await harness.api.dataSource.query('SELECT status, batch_phase, updated_at, status_reason FROM nodes WHERE batch_id = $1', [batchId])) as typeof rows;
      if (rows.every((row) => row.status === 'UNREACHABLE' && row.batch_phase === 'FAILED' && row.updated_at > before)) {
        break;
      }
      await new Promise((wake) => setTimeout(wake, 200));
    }
    expect(rows.map((row) => [row.status, row.batch_phase, row.updated_at > before])).toEqual(Array(3).fill(['UNREACHABLE', 'FAILED', true]));
    expect(rows[0].status_reason).toMatch(/refused|unreachable|connect/i);
  }, 120_000);

  it('refuses a VIEWER and an unknown cluster', async () => {
    const viewer = await addNodes({ list: 'v-1 127.0.0.61' }, await harness.tokenFor('VIEWER'));
    expect(viewer.errors?.[0]?.message).toBe('this operation needs the OPERATOR role; you are VIEWER');
    const unknown = await harness.gql(ADD_NODES, { input: { clusterId: '6f1c1d7e-0000-4000-8000-000000000000', list: 'v-1 127.0.0.61', password: 'x' } }, operator);
    expect(unknown.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    const neither = await harness.gql(ADD_NODES, { input: { clusterId, password: 'x' } }, operator);
    expect(neither.errors?.[0]?.message).toMatch(/exactly one of list, range or rows/);
  });
});
