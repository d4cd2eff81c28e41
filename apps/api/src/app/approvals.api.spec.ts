import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { CreateUserDocument } from '@ccos/shared/api-schema';
import { eventually } from '@ccos/shared/util-timing/testing';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const uid = (n: number) => `a1f0c7e2-0000-4000-8000-${String(n).padStart(12, '0')}`;
const node = (name: string) =>
  `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}, node-role.kubernetes.io/worker: ""}}\nstatus: {conditions: [{type: Ready, status: "True"}], allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}`;
const running = '{phase: Running, conditions: [{type: Ready, status: "True"}]}';

/** w1: a pod with no controller (only a forced drain deletes it). w2: a pod whose budget allows no disruption. w3, w4: empty workers. */
const SEED = [
  node('w1'),
  node('w2'),
  node('w3'),
  node('w4'),
  `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: db, namespace: shop, uid: ${uid(1)}}\nspec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}`,
  `apiVersion: v1\nkind: Pod\nmetadata: {name: handmade, namespace: default}\nspec: {nodeName: w1, terminationGracePeriodSeconds: 0, containers: [{name: c, image: busybox}]}\nstatus: ${running}`,
  `apiVersion: v1\nkind: Pod\nmetadata: {name: db-1, namespace: shop, labels: {app: db}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: db, uid: ${uid(1)}, controller: true}]}\nspec: {nodeName: w2, terminationGracePeriodSeconds: 0, containers: [{name: c, image: db}]}\nstatus: ${running}`,
  `apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db-budget, namespace: shop}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}}`,
].join('\n---\n');

/** How long a held action waits here: long enough to be approved, short enough to watch one expire. */
const TTL_SECONDS = 8;

interface Request {
  id: string;
  action: string;
  target: string;
  status: string;
  requestedBy: string;
  decidedBy: string | null;
  outcome: string | null;
  preview: Record<string, unknown> | null;
}
const REQUEST_FIELDS = 'id action target status requestedBy decidedBy outcome preview';

/**
 * Four-eyes on a cluster: what cannot be undone or passes a safety check is held until a second
 * person with the action's role approves it; it then runs as its requester's. Against kube-sim.
 */
describe('four-eyes approval', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let admin: string;
  let secondAdmin: string;
  let operator: string;
  let viewer: string;
  let clusterId: string;

  const nodeId = async (hostname: string): Promise<string> =>
    eventually(
      async () => (await harness.gql<{ nodes: Array<{ id: string; hostname: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname } }', { c: clusterId }, viewer)).data?.nodes.find((entry) => entry.hostname === hostname)?.id,
      { what: `node ${hostname} listed`, timeoutMs: 10_000, intervalMs: 100 },
    );
  const removalRuns = async (id: string) =>
    (await harness.gql<{ removalRuns: Array<{ id: string; status: string; requestedBy: string; phase: string }> }>('query($n: ID!) { removalRuns(nodeId: $n) { id status requestedBy phase } }', { n: id }, viewer)).data?.removalRuns ?? [];
  const requests = async (pendingOnly = false) =>
    (await harness.gql<{ approvalRequests: Request[] }>(`query($c: ID!, $p: Boolean) { approvalRequests(clusterId: $c, pendingOnly: $p) { ${REQUEST_FIELDS} } }`, { c: clusterId, p: pendingOnly }, viewer)).data?.approvalRequests ?? [];
  const approve = (id: string, token: string) => harness.gql<{ approveRequest: Request }>(`mutation($id: ID!) { approveRequest(id: $id) { ${REQUEST_FIELDS} } }`, { id }, token);
  const remove = (id: string, options: Record<string, unknown>, token: string) =>
    harness.gql<{ removeNode: { id: string } }>('mutation($n: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $n, options: $o) { id } }', { n: id, o: options }, token);

  beforeAll(async () => {
    sim = await startKubeSim({ seed: [SEED, SHIPPED_RBAC].join('\n---\n'), orphanedPodGcSeconds: -1 });
    harness = await startApiHarness({ APPROVAL_TTL_SECONDS: String(TTL_SECONDS) });
    admin = await harness.tokenFor('ADMIN');
    operator = await harness.tokenFor('OPERATOR');
    viewer = await harness.tokenFor('VIEWER');
    const created = await harness.gql(CreateUserDocument, { input: { username: 'second-admin', password: 'second-admin-password-123', role: 'ADMIN' } }, admin);
    expect(created.errors).toBeUndefined();
    secondAdmin = await harness.login('second-admin', 'second-admin-password-123');
    clusterId = await harness.registerSimCluster(sim);
  });
  afterAll(async () => {
    await harness?.stop();
    await sim?.stop();
  });

  it('is off by default and switched by an ADMIN only', async () => {
    const set = (enabled: boolean, token: string) =>
      harness.gql<{ setClusterFourEyes: { fourEyes: boolean } }>('mutation($c: ID!, $e: Boolean!) { setClusterFourEyes(clusterId: $c, enabled: $e) { fourEyes } }', { c: clusterId, e: enabled }, token);
    expect((await harness.gql<{ cluster: { fourEyes: boolean } }>('query($c: ID!) { cluster(id: $c) { fourEyes } }', { c: clusterId }, viewer)).data?.cluster.fourEyes).toBe(false);
    expect((await set(true, operator)).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect((await set(true, admin)).data?.setClusterFourEyes.fourEyes).toBe(true);
  });

  it('holds an OPERATOR\'s forced removal with its preview; the requester cannot approve it; a second ADMIN approves it and it runs as the requester\'s', async () => {
    const w1 = await nodeId('w1');
    const asked = await remove(w1, { force: true, ignoreDaemonSets: true }, operator);
    expect(asked.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'approval.required', approvalRequestId: expect.any(String) });
    expect(asked.errors?.[0]?.message).toContain('approvals approve');
    const id = String(asked.errors?.[0]?.extensions?.['approvalRequestId']);
    // Held: nothing ran.
    expect(await removalRuns(w1)).toEqual([]);
    const [held] = await requests(true);
    expect(held).toMatchObject({ id, action: 'REMOVE_NODE', target: 'w1', status: 'PENDING', requestedBy: 'operator' });
    expect(JSON.stringify(held?.preview)).toContain('handmade');

    expect((await approve(id, operator)).errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'approval.ownRequest' });
    expect((await approve(id, viewer)).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    const approved = await approve(id, secondAdmin);
    expect(approved.errors).toBeUndefined();
    expect(approved.data?.approveRequest).toMatchObject({ status: 'APPROVED', decidedBy: 'second-admin', outcome: expect.stringContaining('approved by second-admin') });
    const [run] = await removalRuns(w1);
    expect(run?.requestedBy).toBe('operator (approved by second-admin)');
    await eventually(async () => ((await removalRuns(w1))[0]?.status === 'SUCCEEDED' ? true : undefined), { what: 'the approved removal finishing', timeoutMs: 20_000, intervalMs: 200 });
    expect((await approve(id, admin)).errors?.[0]?.extensions).toMatchObject({ messageCode: 'approval.notPending' });
    // A removal that passes no safety check is not held.
    expect((await remove(await nodeId('w3'), {}, operator)).errors).toBeUndefined();
  });

  it('holds an ADMIN\'s forced drain past a budget until another ADMIN approves it', async () => {
    const w2 = await nodeId('w2');
    expect((await remove(w2, { ignoreDaemonSets: true, timeoutSeconds: 0 }, operator)).errors).toBeUndefined();
    await eventually(async () => ((await removalRuns(w2))[0]?.phase === 'DRAIN' ? true : undefined), { what: 'the drain held by db-budget', timeoutMs: 10_000, intervalMs: 100 });
    const forced = await harness.gql('mutation($n: ID!) { forceRemovalDrain(nodeId: $n, reason: "db-1 is a replica we rebuild") { id } }', { n: w2 }, admin);
    expect(forced.errors?.[0]?.extensions).toMatchObject({ messageCode: 'approval.required' });
    const id = String(forced.errors?.[0]?.extensions?.['approvalRequestId']);
    expect((await removalRuns(w2))[0]?.status).toBe('RUNNING');
    // An OPERATOR's role does not allow the action itself, so it may not approve it either.
    expect((await approve(id, operator)).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect((await approve(id, secondAdmin)).data?.approveRequest.status).toBe('APPROVED');
    await eventually(async () => ((await removalRuns(w2))[0]?.status === 'SUCCEEDED' ? true : undefined), { what: 'the forced drain finishing', timeoutMs: 20_000, intervalMs: 200 });
  });

  it('lets a request nobody decided expire: nothing runs, and approving it afterwards is refused', async () => {
    const w4 = await nodeId('w4');
    const asked = await remove(w4, { force: true, allowLastWorker: true }, operator);
    const id = String(asked.errors?.[0]?.extensions?.['approvalRequestId']);
    await eventually(async () => ((await requests()).find((request) => request.id === id)?.status === 'EXPIRED' ? true : undefined), { what: 'the request expiring', timeoutMs: (TTL_SECONDS + 20) * 1000, intervalMs: 250 });
    expect((await approve(id, secondAdmin)).errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'approval.expired' });
    expect(await removalRuns(w4)).toEqual([]);
    const audit = await harness.gql<{ auditLog: { entries: Array<{ actor: string; action: string; targetId: string | null }> } }>(
      'query($f: AuditLogFilter) { auditLog(filter: $f) { entries { actor action targetId } } }',
      { f: { targetId: id } },
      admin,
    );
    expect(audit.data?.auditLog.entries.map((entry) => [entry.actor, entry.action])).toContainEqual(['system', 'approvalExpired']);
  }, (TTL_SECONDS + 30) * 1000);
});
