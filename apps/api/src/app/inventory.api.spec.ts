import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterAddressGuard, type KubeClient, createKubeClient } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { ApplyInventoryDocument, ExportInventoryDocument, PlanInventoryDocument } from '@ccos/shared/api-schema';
import { eventually } from '@ccos/shared/util-timing/testing';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const LOOPBACK = ClusterAddressGuard.allowing('loopback');
const worker = (name: string, labels = '') =>
  `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}, node-role.kubernetes.io/worker: ""${labels}}}\nstatus: {conditions: [{type: Ready, status: "True"}], addresses: [{type: InternalIP, address: 198.18.0.${name.slice(1)}}], allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}`;
const SEED = [
  'apiVersion: v1\nkind: Node\nmetadata: {name: m1, labels: {node-role.kubernetes.io/control-plane: ""}}\nstatus: {conditions: [{type: Ready, status: "True"}], addresses: [{type: InternalIP, address: 198.18.0.200}]}',
  worker('w1'),
  worker('w2', ', zone: a'),
  worker('w3'),
  worker('w4'),
].join('\n---\n');

/** The data of a response that must have it. */
function dataOf<T>(result: { data?: T | null; errors?: unknown }): T {
  if (!result.data) {
    throw new Error(`no data: ${JSON.stringify(result.errors)}`);
  }
  return result.data;
}

const HEAD = 'apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: sim\n';
/** w1..w4 as they are: what export writes, in the order it writes them. */
const AS_THEY_ARE = `${HEAD}hosts:
  - {hostname: w1, ip: 198.18.0.1}
  - {hostname: w2, ip: 198.18.0.2, labels: {zone: a}}
  - {hostname: w3, ip: 198.18.0.3}
  - {hostname: w4, ip: 198.18.0.4}
`;
/** One host relabelled (and tainted), one taken out, one not named at all. */
const EDITED = `${HEAD}hosts:
  - {hostname: w1, ip: 198.18.0.1}
  - {hostname: w2, ip: 198.18.0.2, labels: {zone: b}, taints: [{key: dedicated, value: db, effect: NoSchedule}]}
  - {hostname: w3, remove: true}
`;

describe('declarative inventory over GraphQL, against kube-sim', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let kube: KubeClient;
  let operator: string;
  let viewer: string;
  let clusterId: string;

  const plan = async (document: string) => {
    const result = await harness.gql(PlanInventoryDocument, { document }, operator);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    return dataOf(result).planInventory;
  };
  const refusal = async (document: string) => {
    const result = await harness.gql(PlanInventoryDocument, { document }, operator);
    return { code: result.errors?.[0]?.extensions?.['code'], message: result.errors?.[0]?.message ?? '' };
  };
  const nodeRows = () => harness.api.dataSource.query<Array<{ hostname: string; status: string; labels: unknown; taints: unknown }>>(
    `SELECT hostname, status, labels, taints FROM nodes WHERE cluster_id = $1 ORDER BY hostname, status`, [clusterId]);

  beforeAll(async () => {
    sim = await startKubeSim({ seed: [SEED, SHIPPED_RBAC].join('\n---\n') });
    kube = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
    harness = await startApiHarness();
    operator = await harness.tokenFor('OPERATOR');
    viewer = await harness.tokenFor('VIEWER');
    clusterId = await harness.registerSimCluster(sim);
    await eventually(async () => ((await nodeRows()).length === 5 ? true : undefined), 10_000, 'the Nodes in the inventory');
    // The workers joined through this service (what an install leaves): its records, with the labels it gave them.
    await harness.api.dataSource.query(`UPDATE nodes SET origin = 'ADDED', ssh_port = 22, ssh_user = 'root' WHERE cluster_id = $1 AND hostname <> 'm1'`, [clusterId]);
    await harness.api.dataSource.query(`UPDATE nodes SET labels = '[{"key":"zone","value":"a"}]' WHERE cluster_id = $1 AND hostname = 'w2'`, [clusterId]);
  });
  afterAll(async () => {
    kube?.close();
    await harness?.stop();
    await sim?.stop();
  });

  it('plans an add for each host it has no record of, and a cluster as the file says as no change', async () => {
    const adds = await plan(`${HEAD}defaults: {credential: {passwordEnv: LAB_PASSWORD}}\nhosts:\n  - {hostname: w7, ip: 198.18.0.7, labels: {zone: c}}\n  - {hostname: w8, ip: 198.18.0.8}\n  - {hostname: w9, ip: 198.18.0.9}\n`);
    expect(adds.changes.map(({ kind, hostname, ip }) => ({ kind, hostname, ip }))).toEqual([
      { kind: 'ADD', hostname: 'w7', ip: '198.18.0.7' },
      { kind: 'ADD', hostname: 'w8', ip: '198.18.0.8' },
      { kind: 'ADD', hostname: 'w9', ip: '198.18.0.9' },
    ]);
    expect(adds.changes[0]).toMatchObject({ labels: [{ key: 'zone', value: 'c' }], credential: { passwordEnv: 'LAB_PASSWORD', passwordFile: null } });
    expect(await plan(AS_THEY_ARE)).toMatchObject({ clusterName: 'sim', changes: [], conflicts: [], attention: [], unchanged: 4 });
  });

  it('refuses a file with an inline password, an unknown field or a host named twice, each by name, and changes nothing', async () => {
    const before = await nodeRows();
    const inline = await refusal(`${HEAD}hosts:\n  - {hostname: w7, ip: 198.18.0.7, password: s3cret-in-the-file}\n`);
    expect(inline.code).toBe('BAD_USER_INPUT');
    expect(inline.message).toContain('hosts[0] (w7): "password" would put a secret into the file');
    expect(inline.message).not.toContain('s3cret-in-the-file');
    // Applied, the file is refused the same way, and its text is kept out of the audit entry of the attempt.
    const applied = await harness.gql(ApplyInventoryDocument, { document: `${HEAD}hosts:\n  - {hostname: w7, ip: 198.18.0.7, password: s3cret-in-the-file}\n`, fingerprint: 'x', credentials: [] }, operator);
    expect(applied.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(await harness.api.dataSource.query(`SELECT detail FROM audit_log WHERE action = 'applyInventory'`))).not.toContain('s3cret-in-the-file');
    expect(await refusal(`${HEAD}hosts:\n  - {hostname: w7, ip: 198.18.0.7, lables: {a: b}}\n`)).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringContaining('hosts[0] (w7): unknown field "lables"') });
    expect(await refusal(`${HEAD}hosts:\n  - {hostname: w7, ip: 198.18.0.7}\n  - {hostname: w7, ip: 198.18.0.8}\n`)).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringContaining('hosts[1].hostname (w7): this host is already named at hosts[0]'),
    });
    expect(await refusal(AS_THEY_ARE.replace('cluster: sim', 'cluster: elsewhere'))).toMatchObject({ code: 'NOT_FOUND', message: 'no cluster named "elsewhere" is registered' });
    expect((await harness.gql(PlanInventoryDocument, { document: AS_THEY_ARE }, viewer)).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect(await nodeRows()).toEqual(before);
  });

  it('names what it cannot apply: a discovered node to relabel, an address that moved', async () => {
    const conflicts = await plan(`${HEAD}hosts:\n  - {hostname: m1, ip: 198.18.0.200, labels: {a: b}}\n  - {hostname: w1, ip: 198.18.0.99}\n`);
    expect(conflicts.changes).toEqual([]);
    expect(conflicts.conflicts.map((text) => text.message)).toEqual([
      'm1 joined the cluster without this service (a discovered node): the inventory can remove it but not change its labels or taints',
      'the cluster has w1 at 198.18.0.1, not 198.18.0.99: remove it, then add it at the new address',
    ]);
  });

  it('applies exactly one relabel and one removal, refuses a stale plan, then plans no change; export plans no change', async () => {
    const planned = await plan(EDITED);
    expect(planned.changes.map(({ kind, hostname }) => `${kind} ${hostname}`)).toEqual(['RELABEL w2', 'REMOVE w3']);
    expect(planned.changes[0]).toMatchObject({ labelsBefore: [{ key: 'zone', value: 'a' }], labels: [{ key: 'zone', value: 'b' }], taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    expect(planned.changes[1].removal).toEqual({ allowed: true, refusal: null, evict: 0, skip: 0, refuse: 0 });

    // w1 changes between plan and apply (someone relabels it): the plan is stale, nothing is applied.
    await harness.api.dataSource.query(`UPDATE nodes SET labels = '[{"key":"x","value":"y"}]' WHERE cluster_id = $1 AND hostname = 'w1'`, [clusterId]);
    const stale = await harness.gql(ApplyInventoryDocument, { document: EDITED, fingerprint: planned.fingerprint, credentials: [] }, operator);
    expect(stale.errors?.[0]).toMatchObject({ message: 'the cluster changed since the plan was made: run plan again and review what it shows', extensions: { code: 'CONFLICT' } });
    await harness.api.dataSource.query(`UPDATE nodes SET labels = '[]' WHERE cluster_id = $1 AND hostname = 'w1'`, [clusterId]);
    expect((await kube.call('read', (o) => kube.core.readNode({ name: 'w2' }, o))).metadata?.labels?.['zone']).toBe('a');

    const applied = await harness.gql(ApplyInventoryDocument, { document: EDITED, fingerprint: planned.fingerprint, credentials: [] }, operator);
    expect(applied.errors, JSON.stringify(applied.errors)).toBeUndefined();
    expect(dataOf(applied).applyInventory).toMatchObject({ batchId: null, removalRunIds: [expect.any(String)] });
    const w2 = await kube.call('read', (o) => kube.core.readNode({ name: 'w2' }, o));
    // The label it gave changed; the labels it did not give stay.
    expect(w2.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'w2', 'node-role.kubernetes.io/worker': '', zone: 'b' });
    expect(w2.spec?.taints).toEqual([{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]);
    await eventually(async () => ((await nodeRows()).find((row) => row.hostname === 'w3')?.status === 'REMOVED' ? true : undefined), 20_000, 'w3 removed');

    expect(await plan(EDITED)).toMatchObject({ changes: [], conflicts: [], unchanged: 3 });
    const audit = await harness.api.dataSource.query<Array<{ action: string; actor: string }>>(`SELECT action, actor FROM audit_log WHERE action = 'applyInventory'`);
    expect(audit).toHaveLength(3);

    const exported = dataOf(await harness.gql(ExportInventoryDocument, { clusterId }, viewer)).exportInventory;
    expect(exported).toBe(`${HEAD}hosts:
  - hostname: w1
    ip: 198.18.0.1
  - hostname: w2
    ip: 198.18.0.2
    labels:
      zone: b
    taints:
      - key: dedicated
        value: db
        effect: NoSchedule
  - hostname: w4
    ip: 198.18.0.4
`);
    expect(await plan(exported)).toMatchObject({ changes: [], conflicts: [], unchanged: 3 });
  });

  it('creates a pool only for an ADMIN, plans its spares, and exports it so that the export plans no change', async () => {
    const pools = 'pools:\n  - {name: gpu, maxSize: 2, profile: {cpuCores: 8, memoryGiB: 32}, labels: {gpu: a100}}\n';
    const withSpare = `${HEAD}${pools}hosts:\n  - {hostname: s1, ip: 198.18.0.21, pool: gpu, credential: {passwordEnv: S1}}\n`;
    const planned = await plan(withSpare);
    expect(planned.changes.map(({ kind, hostname, pool }) => ({ kind, hostname, pool }))).toEqual([
      { kind: 'CREATE_POOL', hostname: null, pool: 'gpu' },
      { kind: 'ADD_SPARE', hostname: 's1', pool: 'gpu' },
    ]);
    expect(planned.changes[0]).toMatchObject({ poolDefinition: { minSize: 0, maxSize: 2, cpuCores: 8, memoryBytes: 32 * 2 ** 30, maxPods: 110, arch: 'amd64' }, labels: [{ key: 'gpu', value: 'a100' }] });
    // An OPERATOR may plan it, not apply it: nothing is created, not even the spare.
    const refused = await harness.gql(ApplyInventoryDocument, { document: withSpare, fingerprint: planned.fingerprint, credentials: [{ hostname: 's1', password: 'spare-password' }] }, operator);
    expect(refused.errors?.[0]).toMatchObject({ message: 'this plan creates pools (gpu), which needs the ADMIN role; you are OPERATOR', extensions: { code: 'FORBIDDEN' } });
    expect(await harness.api.dataSource.query(`SELECT name FROM node_groups`)).toEqual([]);

    const admin = await harness.tokenFor('ADMIN');
    const poolOnly = `${HEAD}${pools}hosts: []\n`;
    const applied = await harness.gql(ApplyInventoryDocument, { document: poolOnly, fingerprint: (await plan(poolOnly)).fingerprint, credentials: [] }, admin);
    expect(applied.errors, JSON.stringify(applied.errors)).toBeUndefined();
    expect(await plan(poolOnly)).toMatchObject({ changes: [], conflicts: [] });
    expect((await plan(poolOnly.replace('maxSize: 2', 'maxSize: 4'))).conflicts.map((text) => text.message)).toEqual([
      'pool gpu differs from the file (maxSize 2 → 4): node groups are not changed by an inventory; change the file to match, or recreate the pool',
    ]);
    const exported = dataOf(await harness.gql(ExportInventoryDocument, { clusterId }, viewer)).exportInventory;
    expect(exported).toContain('pools:\n  - name: gpu\n    minSize: 0\n    maxSize: 2\n');
    expect(await plan(exported)).toMatchObject({ changes: [], conflicts: [] });
  });
});
