import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type KubeClient, createKubeClient, ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { NODE_BOOTSTRAPPER_BINDING } from '@ccos/api/feature-csrs/testing';
import { KUBELET_CLIENT_SIGNER, OPENSHIFT_NODE_BOOTSTRAPPER } from '@ccos/shared/domain';
import { eventually } from '@ccos/shared/util-timing/testing';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, generateCertificateRequest, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

const BOOTSTRAPPER_TOKEN = 'bootstrapper-token-for-removal-tests';
const uid = (n: number) => `e1f0c7e2-0000-4000-8000-${String(n).padStart(12, '0')}`;
const owner = (kind: string, name: string, id: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${id}, controller: true}]`;
const running = '{phase: Running, conditions: [{type: Ready, status: "True"}]}';
const node = (name: string, ready: 'True' | 'Unknown', extra = '') =>
  `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}, node-role.kubernetes.io/worker: ""}}\n${extra}status: {conditions: [{type: Ready, status: "${ready}"}], addresses: [{type: InternalIP, address: 10.1.0.${name.slice(1)}}], allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}`;
const replicaSet = (name: string, app: string, id: string) =>
  `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: ${name}, namespace: shop, uid: ${id}}\nspec: {replicas: 1, selector: {matchLabels: {app: ${app}}}, template: {metadata: {labels: {app: ${app}}}, spec: {containers: [{name: c, image: ${app}}]}}}`;
const pod = (name: string, on: string, spec: string, meta = '') => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}${meta}}\nspec: {nodeName: ${on}, ${spec}}\nstatus: ${running}`;
const budget = (name: string, app: string, rule: string) => `apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: ${name}, namespace: shop}\nspec: {${rule}, selector: {matchLabels: {app: ${app}}}}`;

/**
 * m1: control plane. w1: one pod of every class kubectl drain tells apart. w2 and w5: a pod
 * whose budget allows no disruption. w3: empty. w4: dead (Ready Unknown) with a pod that has a
 * long grace period. w7: a budget-blocked pod for the restart test.
 */
const SEED = [
  `apiVersion: v1\nkind: Node\nmetadata: {name: m1, labels: {node-role.kubernetes.io/master: "", node-role.kubernetes.io/control-plane: ""}}\nspec: {taints: [{key: node-role.kubernetes.io/master, effect: NoSchedule}]}\nstatus: {conditions: [{type: Ready, status: "True"}]}`,
  node('w1', 'True'),
  node('w2', 'True'),
  node('w3', 'True'),
  node('w4', 'Unknown'),
  node('w5', 'True'),
  replicaSet('web', 'web', uid(1)),
  replicaSet('cache', 'cache', uid(2)),
  replicaSet('db', 'db', uid(3)),
  replicaSet('api', 'api', uid(4)),
  replicaSet('queue', 'queue', uid(5)),
  `apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: node-agent, namespace: kube-system, uid: ${uid(9)}}\nspec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}`,
  pod('web-1', 'w1', 'terminationGracePeriodSeconds: 0, containers: [{name: c, image: web}]', `, namespace: shop, labels: {app: web}, ownerReferences: ${owner('ReplicaSet', 'web', uid(1))}`),
  pod('cache-1', 'w1', 'terminationGracePeriodSeconds: 0, volumes: [{name: scratch, emptyDir: {}}], containers: [{name: c, image: cache}]', `, namespace: shop, labels: {app: cache}, ownerReferences: ${owner('ReplicaSet', 'cache', uid(2))}`),
  pod('node-agent-w1', 'w1', 'containers: [{name: c, image: agent}]', `, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', uid(9))}`),
  pod('etcd-w1', 'w1', 'containers: [{name: c, image: etcd}]', ', namespace: kube-system, annotations: {kubernetes.io/config.mirror: 9f0c}'),
  pod('handmade', 'w1', 'terminationGracePeriodSeconds: 0, containers: [{name: c, image: busybox}]', ', namespace: default'),
  pod('db-1', 'w2', 'terminationGracePeriodSeconds: 0, containers: [{name: c, image: db}]', `, namespace: shop, labels: {app: db}, ownerReferences: ${owner('ReplicaSet', 'db', uid(3))}`),
  pod('api-1', 'w4', 'terminationGracePeriodSeconds: 3600, containers: [{name: c, image: api}]', `, namespace: shop, labels: {app: api}, ownerReferences: ${owner('ReplicaSet', 'api', uid(4))}`),
  pod('node-agent-w4', 'w4', 'containers: [{name: c, image: agent}]', `, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', uid(9))}`),
  pod('queue-1', 'w5', 'terminationGracePeriodSeconds: 0, containers: [{name: c, image: queue}]', `, namespace: shop, labels: {app: queue}, ownerReferences: ${owner('ReplicaSet', 'queue', uid(5))}`),
  budget('web-budget', 'web', 'maxUnavailable: 1'),
  budget('db-budget', 'db', 'minAvailable: 1'),
  budget('queue-budget', 'queue', 'minAvailable: 1'),
].join('\n---\n');

const SEED_FLAGS = { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true };

const RUN_FIELDS = 'id nodeId nodeName status phase reason requestedBy cancelRequested blocker blockerSince lastSeq nodeStatus nodeStatusReason blocking { pod pdb message } options { force ignoreDaemonSets timeoutSeconds }';

interface RunView {
  id: string;
  nodeId: string;
  nodeName: string;
  status: string;
  phase: string;
  reason: string | null;
  requestedBy: string;
  cancelRequested: boolean;
  blocker: string | null;
  blockerSince: string | null;
  lastSeq: number;
  nodeStatus: string;
  nodeStatusReason: string | null;
  blocking: Array<{ pod: string; pdb: string | null; message: string }>;
}

interface EventView {
  seq: number;
  kind: string;
  pod: string | null;
  pdb: string | null;
  message: string;
}

interface ProgressView {
  removalProgress: { nodeId: string; run: RunView | null; events: EventView[] };
}

interface NodeView {
  id: string;
  hostname: string;
  status: string;
  statusReason: string | null;
  origin: string;
  role: string;
  ready: boolean;
  unschedulable: boolean;
}

describe('node removal over GraphQL, against kube-sim', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let kube: KubeClient;
  let operator: string;
  let viewer: string;
  let clusterId: string;
  const clients: Client[] = [];

  const gqlOk = async <T>(query: string, variables: Record<string, unknown>, token = operator): Promise<T> => {
    const result = await harness.gql<T>(query, variables, token);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    return result.data as T;
  };

  const nodes = async (): Promise<NodeView[]> =>
    (await gqlOk<{ nodes: NodeView[] }>('query($c: ID!) { nodes(clusterId: $c) { id hostname status statusReason origin role ready unschedulable } }', { c: clusterId }, viewer)).nodes;

  const active = async (hostname: string): Promise<NodeView> => {
    const found = (await nodes()).filter((entry) => entry.hostname === hostname && entry.status !== 'REMOVED');
    expect(found, hostname).toHaveLength(1);
    return found[0];
  };

  const remove = (nodeId: string, options: Record<string, unknown> = {}, token = operator) =>
    harness.gql<{ removeNode: RunView }>(`mutation($n: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $n, options: $o) { ${RUN_FIELDS} } }`, { n: nodeId, o: options }, token);

  const runs = async (nodeId: string) =>
    (await gqlOk<{ removalRuns: Array<RunView & { events: EventView[] }> }>(`query($n: ID!) { removalRuns(nodeId: $n) { ${RUN_FIELDS} events { seq kind pod pdb message } } }`, { n: nodeId }, viewer))
      .removalRuns;

  const finished = async (nodeId: string, timeoutMs = 20_000): Promise<RunView & { events: EventView[] }> => {
    let last: (RunView & { events: EventView[] }) | undefined;
    return eventually(
      async () => {
        last = (await runs(nodeId)).at(-1);
        return last && last.status !== 'RUNNING' ? last : undefined;
      },
      { what: `the run of ${nodeId} ending`, timeoutMs, intervalMs: 100, context: () => JSON.stringify(last) },
    );
  };

  const kubeNode = async (name: string) => {
    try {
      return await kube.call('read', (o) => kube.core.readNode({ name }, o));
    } catch {
      return null;
    }
  };
  const podsOn = async (name: string) =>
    (await kube.call('list', (o) => kube.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${name}` }, o))).items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort();

  /** Collects removalProgress messages of a node. */
  const follow = async (nodeId: string) => {
    const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${viewer}` } });
    clients.push(client);
    const messages: ProgressView['removalProgress'][] = [];
    const errors: unknown[] = [];
    client.subscribe<ProgressView>(
      { query: `subscription($n: ID!) { removalProgress(nodeId: $n) { nodeId run { ${RUN_FIELDS} } events { seq kind pod pdb message } } }`, variables: { n: nodeId } },
      { next: (message) => (message.data ? messages.push(message.data.removalProgress) : errors.push(message.errors)), error: (error) => errors.push(error), complete: () => undefined },
    );
    const until = async (done: (all: ProgressView['removalProgress'][]) => boolean, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!done(messages)) {
        if (Date.now() > deadline) {
          throw new Error(`progress: condition not met; ${JSON.stringify(messages).slice(-2000)} ${JSON.stringify(errors)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return messages;
    };
    await until((all) => all.length > 0, 5000);
    return { messages, errors, until, events: () => messages.flatMap((message) => message.events) };
  };

  beforeAll(async () => {
    sim = await startKubeSim({
      seed: [SEED, NODE_BOOTSTRAPPER_BINDING, SHIPPED_RBAC].join('\n---\n'),
      orphanedPodGcSeconds: -1,
      staticTokens: [{ token: BOOTSTRAPPER_TOKEN, user: OPENSHIFT_NODE_BOOTSTRAPPER, uid: 'nb', groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator'] }],
    });
    kube = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
    harness = await startApiHarness();
    operator = await harness.tokenFor('OPERATOR');
    viewer = await harness.tokenFor('VIEWER');
    clusterId = await harness.registerSimCluster(sim);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    kube?.close();
    await harness?.stop();
    await sim?.stop();
  });

  it('lists the Nodes found in the cluster after registration as DISCOVERED, with role, Ready and cordon', async () => {
    await expect.poll(async () => (await nodes()).length, { timeout: 10_000, interval: 100 }).toBe(6);
    expect((await nodes()).map(({ hostname, status, origin, role, ready, unschedulable }) => ({ hostname, status, origin, role, ready, unschedulable }))).toEqual([
      { hostname: 'm1', status: 'JOINED', origin: 'DISCOVERED', role: 'control-plane', ready: true, unschedulable: false },
      ...['w1', 'w2', 'w3', 'w4', 'w5'].map((hostname) => ({ hostname, status: 'JOINED', origin: 'DISCOVERED', role: 'worker', ready: hostname !== 'w4', unschedulable: false })),
    ]);
  });

  it('says what each node allows, as the domain decides: nothing on the control plane, removal of a worker found in the cluster', async () => {
    const listed = (await gqlOk<{ nodes: { hostname: string; everJoined: boolean; availableActions: string[] }[] }>('query($c: ID!) { nodes(clusterId: $c) { hostname everJoined availableActions } }', { c: clusterId }, viewer)).nodes;
    expect(listed).toEqual([
      { hostname: 'm1', everJoined: true, availableActions: [] },
      ...['w1', 'w2', 'w3', 'w4', 'w5'].map((hostname) => ({ hostname, everJoined: true, availableActions: ['REMOVE'] })),
    ]);
  });

  it('needs OPERATOR to remove, cancel or uncordon, and VIEWER to look', async () => {
    const w3 = await active('w3');
    for (const [query, needed] of [
      ['query($n: ID!) { removalPreview(nodeId: $n) { allowed } }', 'VIEWER'],
      ['query($n: ID!) { removalRuns(nodeId: $n) { id } }', 'VIEWER'],
      ['mutation($n: ID!) { removeNode(nodeId: $n) { id } }', 'OPERATOR'],
      ['mutation($n: ID!) { cancelRemoval(nodeId: $n) { id } }', 'OPERATOR'],
      ['mutation($n: ID!) { skipRemovalHostSide(nodeId: $n, reason: "gone") { id } }', 'OPERATOR'],
      ['mutation($n: ID!) { uncordonNode(nodeId: $n) { status } }', 'OPERATOR'],
    ] as const) {
      expect((await harness.gql(query, { n: w3.id })).errors?.[0]?.extensions?.['code'], query).toBe('UNAUTHENTICATED');
      if (needed === 'OPERATOR') {
        expect((await harness.gql(query, { n: w3.id }, viewer)).errors?.[0]?.extensions?.['code'], query).toBe('FORBIDDEN');
      } else {
        expect((await harness.gql(query, { n: w3.id }, viewer)).errors, query).toBeUndefined();
      }
    }
  });

  it('refuses a control-plane node, in the preview and in removeNode', async () => {
    const m1 = await active('m1');
    const preview = await gqlOk<{ removalPreview: { allowed: boolean; refusal: string; safety: Array<{ rule: string; passed: boolean }> } }>(
      'query($n: ID!, $o: RemoveNodeInput) { removalPreview(nodeId: $n, options: $o) { allowed refusal safety { rule passed } } }',
      { n: m1.id, o: { ...SEED_FLAGS, allowLastWorker: true } },
      viewer,
    );
    expect(preview.removalPreview.allowed).toBe(false);
    expect(preview.removalPreview.safety).toContainEqual({ rule: 'CONTROL_PLANE', passed: false });
    const refused = await remove(m1.id, { ...SEED_FLAGS, allowLastWorker: true });
    expect(refused.errors?.[0]).toMatchObject({
      message: expect.stringContaining('m1 is a control-plane node'),
      extensions: { code: 'FAILED_PRECONDITION', rules: ['CONTROL_PLANE'] },
    });
    expect((await kubeNode('m1'))?.spec?.unschedulable).toBeFalsy();
    expect((await active('m1')).status).toBe('JOINED');
  });

  it('previews w1: every pod by class and action, kubectl’s refusals, budgets, room elsewhere, and no SSH access for a discovered node', async () => {
    const w1 = await active('w1');
    type Preview = {
      removalPreview: {
        allowed: boolean;
        refusal: string | null;
        counts: { evict: number; skip: number; refuse: number };
        pods: Array<{ pod: string; podClass: string; action: string }>;
        refusals: string[];
        warnings: string[];
        budgets: Array<{ name: string; disruptionsAllowed: number; pods: string[]; blocks: boolean }>;
        capacity: { fits: boolean; candidates: string[]; unmanaged: string[] } | null;
        host: { credentials: boolean; reachable: boolean | null };
        safety: Array<{ rule: string; passed: boolean }>;
      };
    };
    const query = `query($n: ID!, $o: RemoveNodeInput) { removalPreview(nodeId: $n, options: $o) {
      allowed refusal counts { evict skip refuse } pods { pod podClass action } refusals warnings
      budgets { name disruptionsAllowed pods blocks } capacity { fits candidates unmanaged } host { credentials reachable } safety { rule passed } } }`;
    const strict = (await gqlOk<Preview>(query, { n: w1.id }, viewer)).removalPreview;
    expect(strict.allowed).toBe(false);
    expect(strict.counts).toEqual({ evict: 1, skip: 1, refuse: 3 });
    expect(strict.refusals).toEqual([
      'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/node-agent-w1',
      'cannot delete Pods with local storage (use --delete-emptydir-data to override): shop/cache-1',
      'cannot delete Pods that declare no controller (use --force to override): default/handmade',
    ]);
    const seed = (await gqlOk<Preview>(query, { n: w1.id, o: SEED_FLAGS }, viewer)).removalPreview;
    expect(seed).toMatchObject({ allowed: true, refusal: null, counts: { evict: 3, skip: 2, refuse: 0 }, host: { credentials: false, reachable: null } });
    expect(seed.pods).toEqual(
      expect.arrayContaining([
        { pod: 'shop/web-1', podClass: 'MANAGED', action: 'EVICT' },
        { pod: 'shop/cache-1', podClass: 'LOCAL_STORAGE', action: 'EVICT' },
        { pod: 'default/handmade', podClass: 'UNMANAGED', action: 'EVICT' },
        { pod: 'kube-system/node-agent-w1', podClass: 'DAEMONSET', action: 'SKIP' },
        { pod: 'kube-system/etcd-w1', podClass: 'MIRROR', action: 'SKIP' },
      ]),
    );
    expect(seed.budgets).toEqual([{ name: 'web-budget', disruptionsAllowed: 1, pods: ['shop/web-1'], blocks: false }]);
    // Removal cannot revoke certificates (Kubernetes has none to revoke with): the preview says so.
    expect(seed.warnings).toContain(
      'removal cannot revoke the certificates issued for w1: its client and serving certificates stay valid until they expire (up to a year) on any machine that holds them; wipe its disk, and re-adding the name needs an ADMIN\'s acknowledgement while they may be valid',
    );
    expect(seed.capacity).toMatchObject({ fits: true, candidates: ['w2', 'w3', 'w5'], unmanaged: ['default/handmade'] });
    expect(seed.safety).toEqual([
      { rule: 'CONTROL_PLANE', passed: true },
      { rule: 'LAST_WORKER', passed: true },
    ]);
  });

  it('a drain refused by the options leaves w1 cordoned as DRAIN_FAILED with kubectl’s reasons; again with the seed’s flags it drains, deletes the Node, denies its CSRs and revokes its tokens', async () => {
    const w1 = await active('w1');
    // Leftovers a removal must clean up: a pending CSR for the node and an agent token.
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:w1', organizations: ['system:nodes'] });
    const requester = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfigFor({ token: BOOTSTRAPPER_TOKEN }) } });
    const csr = await requester.call('create csr', (o) =>
      requester.certificates.createCertificateSigningRequest(
        { body: { metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: KUBELET_CLIENT_SIGNER, usages: ['digital signature', 'client auth'] } } },
        o,
      ),
    );
    requester.close();
    const csrName = csr.metadata?.name ?? '';
    await harness.api.dataSource.query(`INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash) VALUES ($1, $2, 'SUCCEEDED', 'operator', 'sha256-of-a-token')`, [randomUUID(), w1.id]);
    await expect.poll(async () => (await gqlOk<{ csrs: Array<{ name: string }> }>('query($c: ID!) { csrs(clusterId: $c, pendingOnly: true) { name } }', { c: clusterId }, viewer)).csrs.map((c) => c.name), { timeout: 5000 }).toContain(csrName);

    const refused = await remove(w1.id);
    expect(refused.errors).toBeUndefined();
    expect(refused.data?.removeNode).toMatchObject({ status: 'RUNNING', phase: 'DRAIN', nodeName: 'w1', requestedBy: 'operator' });
    const failed = await finished(w1.id);
    expect(failed).toMatchObject({ status: 'FAILED', phase: 'DRAIN', nodeStatus: 'DRAIN_FAILED' });
    expect(failed.nodeStatusReason).toContain('cannot delete Pods that declare no controller (use --force to override): default/handmade');
    expect(failed.blocking.map((b) => b.pod).sort()).toEqual(['default/handmade', 'kube-system/node-agent-w1', 'shop/cache-1']);
    expect(await active('w1')).toMatchObject({ status: 'DRAIN_FAILED', unschedulable: true });
    expect((await kubeNode('w1'))?.spec?.unschedulable).toBe(true);
    expect(await podsOn('w1')).toEqual(['default/handmade', 'kube-system/etcd-w1', 'kube-system/node-agent-w1', 'shop/cache-1', 'shop/web-1']);

    const progress = await follow(w1.id);
    const retried = await remove(w1.id, SEED_FLAGS);
    expect(retried.errors).toBeUndefined();
    const done = await finished(w1.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', phase: 'DONE', nodeStatus: 'REMOVED' });
    expect(await kubeNode('w1')).toBeNull();
    expect(await podsOn('w1')).toEqual(['kube-system/etcd-w1', 'kube-system/node-agent-w1']);
    expect(done.events.map((e) => e.kind)).toEqual([
      'STARTED',
      'CORDONED',
      'POD_SKIPPED',
      'POD_SKIPPED',
      ...done.events.filter((e) => e.kind === 'POD_EVICTED' || e.kind === 'POD_DELETED').map((e) => e.kind),
      'DRAIN_FINISHED',
      'KUBELET_NOT_STOPPED',
      'NODE_DELETED',
      'CSRS_DENIED',
      'TOKENS_REVOKED',
      'FINISHED',
    ]);
    expect(done.events.filter((e) => e.kind === 'POD_DELETED').map((e) => e.pod).sort()).toEqual(['default/handmade', 'shop/cache-1', 'shop/web-1']);
    expect(done.events.find((e) => e.kind === 'CSRS_DENIED')?.message).toBe(`denied 1 pending CSR of w1: ${csrName}`);
    expect(done.events.find((e) => e.kind === 'TOKENS_REVOKED')?.message).toBe('revoked 1 agent token');
    const denied = await kube.call('read csr', (o) => kube.certificates.readCertificateSigningRequest({ name: csrName }, o));
    expect(denied.status?.conditions?.[0]).toMatchObject({ type: 'Denied', message: expect.stringContaining('node removed') });
    const decisions: Array<{ decision: string; reason: string }> = await harness.api.dataSource.query('SELECT decision, reason FROM csr_decisions WHERE csr_name = $1', [csrName]);
    expect(decisions).toEqual([{ decision: 'DENIED', reason: 'node removed' }]);
    const tokens: Array<{ agent_token_hash: string | null }> = await harness.api.dataSource.query('SELECT agent_token_hash FROM install_runs WHERE node_id = $1', [w1.id]);
    expect(tokens).toEqual([{ agent_token_hash: null }]);

    // The subscriber saw the retry from its start to its end, each event once and in order.
    const messages = await progress.until((all) => all.some((m) => m.run?.id === done.id && m.events.some((e) => e.kind === 'FINISHED')));
    const seen = messages.filter((m) => m.run?.id === done.id).flatMap((m) => m.events.map((e) => e.seq));
    expect(seen).toEqual(done.events.map((e) => e.seq));

    const history = await runs(w1.id);
    expect(history.map((run) => run.status)).toEqual(['FAILED', 'SUCCEEDED']);
    const record = (await nodes()).find((entry) => entry.id === w1.id);
    expect(record).toMatchObject({ status: 'REMOVED', statusReason: expect.stringContaining('removed by operator') });
  });

  it('reports a blocking PodDisruptionBudget live, refuses a second removal meanwhile, and finishes once the budget allows it', async () => {
    const w2 = await active('w2');
    const progress = await follow(w2.id);
    expect((await remove(w2.id, { ignoreDaemonSets: true })).errors).toBeUndefined();
    await progress.until((all) => all.some((m) => m.events.some((e) => e.kind === 'POD_BLOCKED')));
    expect(progress.events().find((e) => e.kind === 'POD_BLOCKED')).toEqual({
      seq: expect.any(Number),
      kind: 'POD_BLOCKED',
      pod: 'shop/db-1',
      pdb: 'db-budget',
      message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget db-budget needs 1 healthy pods and has 1 currently",
    });
    // The run names its blocker live, since when.
    await progress.until((all) => all.some((m) => m.run?.blocker !== null && m.run?.blocker !== undefined));
    expect(progress.messages.findLast((m) => m.run?.blocker)?.run).toMatchObject({ blocker: 'PodDisruptionBudget shop/db-budget allows no disruption of shop/db-1 now', blockerSince: expect.any(String) });
    const second = await remove(w2.id, { ignoreDaemonSets: true });
    expect(second.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
    expect((await active('w2')).status).toBe('REMOVING');
    // The metrics see the drain held by the budget, on the replica that executes it.
    const metrics = async () => (await fetch(`${harness.url}/metrics`)).text();
    const succeededBefore = Number(/^ccos_removal_runs_finished_total\{outcome="SUCCEEDED"\} (\d+)$/m.exec(await metrics())?.[1] ?? 0);
    const blocked = await metrics();
    expect(blocked).toMatch(/^ccos_removals_in_progress\{phase="DRAIN"\} 1$/m);
    expect(Number(/^ccos_evictions_refused_total\{cluster="sim"\} (\d+)$/m.exec(blocked)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^ccos_removal_drain_blocked_seconds\{cluster="sim",node="w2"\} (\S+)$/m.exec(blocked)?.[1])).toBeGreaterThanOrEqual(0);
    expect(blocked).toMatch(/^ccos_removal_drain_timeout_seconds\{cluster="sim",node="w2"\} \d+$/m);

    await kube.call('relax', (o) => kube.policy.patchNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 0 }] }, o));
    // The FINISHED event is published as soon as it is stored, the run's end right after it: the last message has both.
    const messages = await progress.until((all) => all.some((m) => m.events.some((e) => e.kind === 'FINISHED')) && all.at(-1)?.run?.status !== 'RUNNING', 20_000);
    expect(messages.at(-1)?.run).toMatchObject({ status: 'SUCCEEDED', nodeStatus: 'REMOVED', blocker: null });
    const kinds = messages.flatMap((m) => m.events.map((e) => e.kind));
    expect(kinds.filter((kind) => kind === 'POD_BLOCKED')).toHaveLength(1);
    expect(kinds.indexOf('POD_BLOCKED')).toBeLessThan(kinds.indexOf('POD_EVICTED'));
    expect(kinds.slice(-6)).toEqual(['DRAIN_FINISHED', 'KUBELET_NOT_STOPPED', 'NODE_DELETED', 'CSRS_DENIED', 'TOKENS_REVOKED', 'FINISHED']);
    const seqs = messages.flatMap((m) => m.events.map((e) => e.seq));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
    expect(await kubeNode('w2')).toBeNull();
    const after = await metrics();
    expect(Number(/^ccos_removal_runs_finished_total\{outcome="SUCCEEDED"\} (\d+)$/m.exec(after)?.[1])).toBe(succeededBefore + 1);
    expect(after).not.toMatch(/^ccos_removal_drain_blocked_seconds\{/m);
    expect(after).not.toMatch(/^ccos_removals_in_progress\{phase="DRAIN"\} [1-9]/m);
  });

  it('a drain that outlives its timeout ends DRAIN_FAILED naming the pod and its budget; the node stays cordoned and its Node is kept', async () => {
    const w5 = await active('w5');
    expect((await remove(w5.id, { ignoreDaemonSets: true, timeoutSeconds: 2 })).errors).toBeUndefined();
    const failed = await finished(w5.id);
    expect(failed).toMatchObject({
      status: 'FAILED',
      phase: 'DRAIN',
      nodeStatus: 'DRAIN_FAILED',
      blocking: [{ pod: 'shop/queue-1', pdb: 'queue-budget', message: expect.stringContaining("violate the pod's disruption budget") }],
    });
    // The timeout counts from the request, the wait for a worker to take the run's job included: the reason names what was left of it when the drain began.
    expect(failed.nodeStatusReason).toMatch(/the drain did not finish within [12] s; still on the node: shop\/queue-1/);
    expect(failed.nodeStatusReason).toContain('shop/queue-1 (PodDisruptionBudget shop/queue-budget:');
    const node = await kubeNode('w5');
    expect(node?.spec?.unschedulable).toBe(true);
    expect(await podsOn('w5')).toEqual(['shop/queue-1']);
    expect(await active('w5')).toMatchObject({ status: 'DRAIN_FAILED', unschedulable: true, statusReason: failed.nodeStatusReason });
  });

  it('the last schedulable Ready worker needs allowLastWorker', async () => {
    // w5 is cordoned, w4 is not Ready, w1 and w2 are gone: w3 is the last one.
    const w3 = await active('w3');
    const refused = await remove(w3.id);
    expect(refused.errors?.[0]).toMatchObject({ message: expect.stringContaining('allowLastWorker'), extensions: { code: 'FAILED_PRECONDITION', rules: ['LAST_WORKER'] } });
    expect((await active('w3')).status).toBe('JOINED');
    expect((await remove(w3.id, { allowLastWorker: true })).errors).toBeUndefined();
    expect(await finished(w3.id)).toMatchObject({ status: 'SUCCEEDED', nodeStatus: 'REMOVED' });
    expect(await kubeNode('w3')).toBeNull();
  });

  it('uncordons after a failed removal; a cancelled drain leaves the node cordoned until uncordoned again', async () => {
    const w5 = await active('w5');
    const uncordoned = await gqlOk<{ uncordonNode: { status: string; changed: boolean } }>('mutation($n: ID!) { uncordonNode(nodeId: $n) { status changed } }', { n: w5.id });
    expect(uncordoned.uncordonNode).toEqual({ status: 'JOINED', changed: true });
    expect((await kubeNode('w5'))?.spec?.unschedulable).toBeFalsy();
    await expect.poll(async () => (await active('w5')).unschedulable, { timeout: 5000 }).toBe(false);

    const progress = await follow(w5.id);
    const started = await remove(w5.id, { ignoreDaemonSets: true, allowLastWorker: true });
    expect(started.errors).toBeUndefined();
    // The first message replays w5's earlier (failed) run, FINISHED included: this run's drain is the one to be held.
    await progress.until((all) => all.some((m) => m.run?.id === started.data?.removeNode.id && m.events.some((e) => e.kind === 'POD_BLOCKED')));
    const cancelled = await gqlOk<{ cancelRemoval: RunView }>(`mutation($n: ID!) { cancelRemoval(nodeId: $n) { ${RUN_FIELDS} } }`, { n: w5.id });
    expect(cancelled.cancelRemoval).toMatchObject({ status: 'CANCELLED', cancelRequested: true, nodeStatus: 'DRAIN_FAILED', reason: expect.stringContaining('cancelled by operator') });
    const thisRun = (m: ProgressView['removalProgress']) => m.run?.id === cancelled.cancelRemoval.id;
    const messages = await progress.until((all) => all.some((m) => thisRun(m) && m.events.some((e) => e.kind === 'FINISHED')));
    expect(messages.filter(thisRun).flatMap((m) => m.events.map((e) => e.kind)).slice(-3)).toEqual(['CANCEL_REQUESTED', 'DRAIN_FAILED', 'FINISHED']);
    expect((await kubeNode('w5'))?.spec?.unschedulable).toBe(true);
    expect((await harness.gql('mutation($n: ID!) { cancelRemoval(nodeId: $n) { id } }', { n: w5.id }, operator)).errors?.[0]?.extensions?.['code']).toBe('FAILED_PRECONDITION');

    expect((await gqlOk<{ uncordonNode: { status: string } }>('mutation($n: ID!) { uncordonNode(nodeId: $n) { status } }', { n: w5.id })).uncordonNode.status).toBe('JOINED');
    expect((await kubeNode('w5'))?.spec?.unschedulable).toBeFalsy();
    expect((await runs(w5.id)).map((run) => run.status)).toEqual(['FAILED', 'CANCELLED']);
  });

  it('removes a dead node ungracefully only with its name typed, deleting its pods with grace 0; a Ready node is refused', async () => {
    const w5 = await active('w5');
    const ready = await remove(w5.id, { ungraceful: true, confirmHostname: 'w5', ...SEED_FLAGS });
    expect(ready.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', rules: expect.arrayContaining(['UNGRACEFUL_NEEDS_DEAD_NODE']) });
    const w4 = await active('w4');
    const unconfirmed = await remove(w4.id, { ungraceful: true, ...SEED_FLAGS });
    expect(unconfirmed.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', rules: ['CONFIRM_HOSTNAME'] });
    const mistyped = await remove(w4.id, { ungraceful: true, confirmHostname: 'w5', ...SEED_FLAGS });
    expect(mistyped.errors?.[0]?.extensions).toMatchObject({ rules: ['CONFIRM_HOSTNAME'] });

    expect((await remove(w4.id, { ungraceful: true, confirmHostname: 'w4', ...SEED_FLAGS })).errors).toBeUndefined();
    const done = await finished(w4.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', nodeStatus: 'REMOVED' });
    expect(done.events.filter((e) => e.kind === 'POD_FORCE_DELETED').map((e) => e.pod)).toEqual(['shop/api-1']);
    expect(await kubeNode('w4')).toBeNull();
    expect(await podsOn('w4')).toEqual(['kube-system/node-agent-w4']);
  });

  it('a Node registered after the cluster appears as DISCOVERED, and one deleted outside the service becomes REMOVED', async () => {
    await kube.call('create', (o) => kube.core.createNode({ body: { metadata: { name: 'w6', labels: { 'node-role.kubernetes.io/worker': '' } } } }, o));
    await expect.poll(async () => (await nodes()).find((entry) => entry.hostname === 'w6')?.origin, { timeout: 5000 }).toBe('DISCOVERED');
    await kube.call('delete', (o) => kube.core.deleteNode({ name: 'w6' }, o));
    await expect.poll(async () => (await nodes()).find((entry) => entry.hostname === 'w6')?.status, { timeout: 5000 }).toBe('REMOVED');
    expect((await nodes()).find((entry) => entry.hostname === 'w6')?.statusReason).toBe('the Node object w6 was deleted from the cluster outside this service');
  });

  it('rejects bad options with the field named', async () => {
    const w5 = await active('w5');
    const result = await remove(w5.id, { timeoutSeconds: -5 });
    expect(result.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringContaining('timeoutSeconds') });
    const removedNode = (await nodes()).find((entry) => entry.hostname === 'w1' && entry.status === 'REMOVED');
    const again = await remove(removedNode?.id ?? '', SEED_FLAGS);
    expect(again.errors?.[0]).toMatchObject({ extensions: { code: 'FAILED_PRECONDITION' }, message: expect.stringContaining('REMOVED') });
  });

  it('skips the host-side part only of a running removal, and only with a written reason', async () => {
    const w5 = await active('w5');
    const skip = (reason: string) => harness.gql(`mutation($n: ID!, $r: String!) { skipRemovalHostSide(nodeId: $n, reason: $r) { ${RUN_FIELDS} } }`, { n: w5.id, r: reason }, operator);
    expect((await skip('  ')).errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'reason' } });
    expect((await skip('the host is gone')).errors?.[0]).toMatchObject({ extensions: { code: 'FAILED_PRECONDITION' }, message: 'no removal of w5 is running' });
  });

  it('goes past a budget that holds the drain only for an ADMIN with a reason: the held pod is deleted, the run finishes, who and why recorded', async () => {
    const admin = await harness.tokenFor('ADMIN');
    const w5 = await active('w5');
    const progress = await follow(w5.id);
    expect((await remove(w5.id, { ignoreDaemonSets: true, allowLastWorker: true })).errors).toBeUndefined();
    await progress.until((all) => all.some((m) => m.run?.blocker?.startsWith('PodDisruptionBudget shop/queue-budget') === true));
    const force = (reason: string, token: string) => harness.gql<{ forceRemovalDrain: RunView & { forceDrain: { actor: string; reason: string } | null } }>(
      `mutation($n: ID!, $r: String!) { forceRemovalDrain(nodeId: $n, reason: $r) { ${RUN_FIELDS} forceDrain { actor reason } } }`,
      { n: w5.id, r: reason },
      token,
    );
    expect((await force('queue is drained by hand', operator)).errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect((await force(' ', admin)).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
    const forced = await force('queue is drained by hand, CHG-7', admin);
    expect(forced.errors).toBeUndefined();
    expect(forced.data?.forceRemovalDrain.forceDrain).toEqual({ actor: 'admin', reason: 'queue is drained by hand, CHG-7' });

    const done = await finished(w5.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', nodeStatus: 'REMOVED', blocker: null });
    expect(done.events.filter((e) => e.pod === 'shop/queue-1').map((e) => e.kind)).toEqual(['POD_BLOCKED', 'POD_FORCE_DELETED', 'POD_DELETED']);
    expect(done.events.find((e) => e.kind === 'POD_FORCE_DELETED')).toMatchObject({ pdb: 'queue-budget', message: 'deleted past its PodDisruptionBudget queue-budget, as admin asked: queue is drained by hand, CHG-7' });
    expect(await podsOn('w5')).toEqual([]);
    expect((await force('again', admin)).errors?.[0]).toMatchObject({ extensions: { code: 'FAILED_PRECONDITION' }, message: 'no removal of w5 is running' });
  });
});
