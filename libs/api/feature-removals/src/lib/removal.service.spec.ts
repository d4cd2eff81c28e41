import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import { type Database, AgentTokens, ClusterEntity, NodeStore, RemovalRunStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { ClusterAddressGuard, type PodEvent } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC, shippedIdentityKubeconfig, startSimWithClient, type SimWithClient } from '@ccos/api/data-access-kube/testing';
import { SshPool } from '@ccos/api/data-access-ssh';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
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

  const serviceOn = (clusters: ClusterAccess): RemovalService =>
    createRemovalFeature({
      runs: new RemovalRunStore(dataSource),
      nodes: new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus())),
      tokens: new AgentTokens(dataSource),
      clusters,
      csrs: { pendingCsrNamesFor: async () => [], deny: async () => undefined },
      hosts: () => null,
      ssh,
      events: createInProcessEventBus(),
      logger,
      runner: { identity: 'spec' },
    }).service;
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
});
