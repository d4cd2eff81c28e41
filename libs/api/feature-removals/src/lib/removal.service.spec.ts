import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import { type Database, AgentTokens, ClusterEntity, type NodeEntity, NodeStore, RemovalRunStore, type ReasonText, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, RecordingJobs, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { ClusterAddressGuard, type PodEvent } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC, shippedIdentityKubeconfig, startSimWithClient, type SimWithClient } from '@ccos/api/data-access-kube/testing';
import { SshPool } from '@ccos/api/data-access-ssh';
import { AppError, createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS, type NodeEvent } from '@ccos/shared/domain';
import { type Message, formatMessage, formatServerText } from '@ccos/shared/messages';
import { createRemovalFeature } from './removal-feature';
import type { ClusterAccess } from './removal-ports';
import type { RemovalService } from './removal.service';

const LOOPBACK = ClusterAddressGuard.allowing('loopback');
const RS_UID = 'c1f0c7e2-0000-4000-8000-000000000017';
const node = (name: string) => `apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {node-role.kubernetes.io/worker: ""}}
status: {conditions: [{type: Ready, status: "True"}], allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}`;
const SEED = [
  SHIPPED_RBAC,
  node('w1'),
  node('w2'),
  'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}',
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: web}]}}}`,
  ...['web-1', 'web-2'].map(
    (name, i) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: shop, labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: ${RS_UID}, controller: true}]}
spec: {nodeName: w${i + 1}, containers: [{name: c, image: web, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}
status: {phase: Running}`,
  ),
].join('\n---\n');

/** Technical names the Chinese catalogue keeps as they are (Kubernetes kinds, the GraphQL operation). */
const TECHNICAL_TERMS = /\b(Node|Pod|cancelRemoval)\b/g;

/** `text` in Chinese, with no English word left once the data (`data`) and technical names are taken out. */
function expectChinese(text: string, data: readonly string[]): void {
  const words = data.reduce((rest, value) => rest.split(value).join(' '), text).replace(TECHNICAL_TERMS, ' ');
  expect(text).toMatch(/[\u4e00-\u9fff]/);
  expect(words, text).not.toMatch(/[A-Za-z]{2,}/);
}

/** What a Chinese page shows for an error the service threw: its code and parameters in zh-CN. */
async function refusalInChinese(action: Promise<unknown>): Promise<string> {
  const error: unknown = await action.then(() => null, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(AppError);
  const { messageCode, messageParams } = (error as AppError).extensions;
  expect(messageCode).toEqual(expect.any(String));
  return formatServerText('zh-CN', messageCode as string, messageParams, 'English fallback');
}

/** The removal preview of w1 reads its pods from the cluster connection's pod cache, and lists them only before that cache has listed. */
describe('removal preview: the node’s pods', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let world: SimWithClient;
  let connections: ClusterConnections;
  let nodeId: string;
  const requests: string[] = [];
  const ssh = new SshPool({ maxSessions: 1 });
  const logger = pino({ level: 'silent' });
  const clusterId = randomUUID();

  const featureOn = (clusters: ClusterAccess, nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()))) =>
    createRemovalFeature({
      runs: new RemovalRunStore(dataSource),
      nodes,
      tokens: new AgentTokens(dataSource),
      clusters,
      csrs: { pendingCsrNamesFor: async () => [], deny: async () => undefined },
      hosts: () => null,
      ssh,
      events: createInProcessEventBus(),
      jobs: new RecordingJobs(),
      logger,
      runner: { identity: 'spec' },
    });
  const serviceOn = (clusters: ClusterAccess): RemovalService => featureOn(clusters).service;
  const previewedPods = async (service: RemovalService): Promise<string[]> =>
    (await service.preview(nodeId, { ...DEFAULT_REMOVAL_OPTIONS, force: true, deleteEmptyDirData: true, ignoreDaemonSets: true })).pods.map((pod) => pod.pod).sort();
  /** Pod lists of one node (what listPodsOnNode sends), as opposed to the pod cache's list of every scheduled pod. */
  const nodePodLists = (): string[] =>
    requests.filter((line) => line.startsWith('GET /api/v1/pods?') && !line.includes('watch=true') && new URL(line.split(' ')[1], 'https://sim').searchParams.get('fieldSelector')?.startsWith('spec.nodeName='));
  const nextPodEvent = (match: (event: PodEvent) => boolean): Promise<PodEvent> =>
    new Promise((resolve) => {
      const unsubscribe = connections.onPodEvent((_cluster, event) => {
        if (match(event)) {
          unsubscribe();
          resolve(event);
        }
      });
    });

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    world = await startSimWithClient({ seed: SEED, log: (line) => requests.push(line) });
    const kubeconfig = shippedIdentityKubeconfig(world.sim);
    const clusters = dataSource.getRepository(ClusterEntity);
    await clusters.insert({ id: clusterId, name: 'sim', apiServerUrl: world.sim.url, vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'KUBECONFIG' });
    connections = new ClusterConnections(
      {
        get: (id) => clusters.findOneByOrFail({ id }),
        list: () => clusters.find(),
        credentialsOf: () => ({ kind: 'KUBECONFIG', kubeconfig }),
        clientOptionsOf: () => ({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig }, addresses: LOOPBACK }),
      },
      logger,
    );
    const nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    nodeId = (await nodes.create({ clusterId, hostname: 'w1', status: 'JOINED', everJoined: true })).id;
  });
  afterAll(async () => {
    await connections?.close();
    await world?.stop();
    await ssh.close();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('before the pod cache has listed, lists the node’s pods (and each candidate’s)', async () => {
    // The connection as it is before its pod cache has listed: podsOnNode knows nothing yet.
    const unsynced: ClusterAccess = {
      watch: async (id) => ({ ...(await connections.watch(id)), podsOnNode: () => null }),
      read: (id, run) => connections.read(id, (watch, signal) => run({ ...watch, podsOnNode: () => null }, signal)),
    };
    const before = nodePodLists().length;
    expect(await previewedPods(serviceOn(unsynced))).toEqual(['shop/web-1']);
    expect(nodePodLists().slice(before).map((line) => new URL(line.split(' ')[1], 'https://sim').searchParams.get('fieldSelector')).sort()).toEqual(['spec.nodeName=w1', 'spec.nodeName=w2']);
  });

  it('once the pod cache has listed, shows pods created and deleted on the node since without listing them', async () => {
    const service = serviceOn(connections);
    await connections.podsSynced(clusterId);
    const before = nodePodLists().length;
    expect(await previewedPods(service)).toEqual(['shop/web-1']);

    const { client } = world;
    const added = nextPodEvent((event) => event.type === 'ADDED' && event.object.metadata?.name === 'web-3');
    await client.call('create', (options) =>
      client.core.createNamespacedPod(
        { namespace: 'shop', body: { metadata: { name: 'web-3', labels: { app: 'web' } }, spec: { nodeName: 'w1', containers: [{ name: 'c', image: 'web' }] } } },
        options,
      ),
    );
    await added;
    expect(await previewedPods(service)).toEqual(['shop/web-1', 'shop/web-3']);

    const deleted = nextPodEvent((event) => event.type === 'DELETED' && event.object.metadata?.name === 'web-1');
    await client.call('delete', (options) => client.core.deleteNamespacedPod({ namespace: 'shop', name: 'web-1', gracePeriodSeconds: 0 }, options));
    await deleted;
    expect(await previewedPods(service)).toEqual(['shop/web-3']);
    expect(nodePodLists().slice(before)).toEqual([]);
  });

  it('refuses a removal, a cancel and an uncordon in words a Chinese page shows in Chinese', async () => {
    const service = serviceOn(connections);
    const nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    const waiting = await nodes.create({ clusterId, hostname: 'w9', status: 'READY_TO_INSTALL' });
    const refused = await refusalInChinese(service.start(waiting.id, DEFAULT_REMOVAL_OPTIONS, 'admin'));
    expect(refused).toBe('节点 w9：节点状态为 待安装 时不能开始移除；需要以下状态之一：已加入；驱逐失败');
    expectChinese(refused, ['w9']);
    expectChinese(await refusalInChinese(service.cancel(waiting.id, 'admin')), ['w9']);
    expectChinese(await refusalInChinese(service.uncordon(waiting.id, 'admin')), ['w9']);
  });

  it('starts a removal with the REMOVAL_STARTED reason coded, so a Chinese page shows it in Chinese', async () => {
    const reasons: Array<{ event: NodeEvent; reason: ReasonText | null }> = [];
    /** The node store, noting each transition's reason as the service hands it over. */
    class NotingNodeStore extends NodeStore {
      override transition(id: string, event: NodeEvent, reason: ReasonText | null, fields?: Parameters<NodeStore['transition']>[3]): Promise<NodeEntity> {
        reasons.push({ event, reason });
        return super.transition(id, event, reason, fields);
      }
    }
    const nodes = new NotingNodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    const feature = featureOn(connections, nodes);
    try {
      const w2 = await nodes.create({ clusterId, hostname: 'w2', status: 'JOINED', everJoined: true });
      await feature.service.start(w2.id, DEFAULT_REMOVAL_OPTIONS, 'admin');
      const started = reasons.find((entry) => entry.event === 'REMOVAL_STARTED')?.reason;
      expect(started).toMatchObject({ code: 'node.removalStarted', message: 'removal started by admin: cordoning and draining' });
      const coded = started as Message;
      expect(formatMessage('zh-CN', coded.code, coded.params)).toBe('admin 已开始移除：正在禁止调度并驱逐');
      expectChinese(formatMessage('zh-CN', coded.code, coded.params), ['admin']);
    } finally {
      await feature.stop();
    }
  });
});
