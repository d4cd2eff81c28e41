import type { V1Pod } from '@kubernetes/client-node';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterEntity } from '@ccos/api/data-access-db';
import { ClusterAddressGuard, type PodEvent } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC, shippedIdentityKubeconfig, startSimWithClient, type SimWithClient } from '@ccos/api/data-access-kube/testing';
import { ClusterConnections, type ClusterDirectory } from './cluster-connections';

const LOOPBACK = ClusterAddressGuard.allowing('loopback');
const CLUSTER_ID = '0b7e9f3c-0000-4000-8000-000000000017';
const SEED = [
  SHIPPED_RBAC,
  'apiVersion: v1\nkind: Node\nmetadata: {name: w1}\nstatus: {conditions: [{type: Ready, status: "True"}]}',
  'apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}',
  'apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop}\nspec: {nodeName: w1, containers: [{name: c, image: web}]}',
  'apiVersion: v1\nkind: Pod\nmetadata: {name: waiting, namespace: shop}\nspec: {containers: [{name: c, image: web}]}',
].join('\n---\n');

const webPod = (name: string): V1Pod => ({ metadata: { name }, spec: { nodeName: 'w1', containers: [{ name: 'c', image: 'web' }] } });
const names = (pods: V1Pod[] | null): string[] | null => pods && pods.map((pod) => pod.metadata?.name ?? '').sort();

describe('ClusterConnections: the pod cache', () => {
  let world: SimWithClient | undefined;
  let connections: ClusterConnections | undefined;

  afterEach(async () => {
    await connections?.close();
    await world?.stop();
    connections = undefined;
    world = undefined;
  });

  const directoryFor = (kubeconfig: string, url: string): ClusterDirectory => {
    const cluster = Object.assign(new ClusterEntity(), { id: CLUSTER_ID, name: 'sim' });
    return {
      get: async () => cluster,
      list: async () => [cluster],
      credentialsOf: () => ({ kind: 'KUBECONFIG', kubeconfig }),
      clientOptionsOf: () => ({ apiServerUrl: url, credentials: { kind: 'KUBECONFIG', kubeconfig }, addresses: LOOPBACK }),
    };
  };

  /** Resolves with the first pod event after this call that `match` accepts. */
  const nextPodEvent = (match: (event: PodEvent) => boolean): Promise<PodEvent> =>
    new Promise((resolve) => {
      const unsubscribe = connections?.onPodEvent((_cluster, event) => {
        if (match(event)) {
          unsubscribe?.();
          resolve(event);
        }
      });
    });

  it('answers a node’s pods from its cache once listed (null before), following pods created and deleted after it started, with one list', async () => {
    const requests: string[] = [];
    world = await startSimWithClient({ seed: SEED, log: (line) => requests.push(line) });
    connections = new ClusterConnections(directoryFor(shippedIdentityKubeconfig(world.sim), world.sim.url), pino({ level: 'silent' }));
    const watch = await connections.ensure(CLUSTER_ID);
    expect(watch.podsOnNode('w1')).toBeNull();
    await connections.podsSynced(CLUSTER_ID);
    expect(names(watch.podsOnNode('w1'))).toEqual(['web-1']);

    const { client } = world;
    const added = nextPodEvent((event) => event.type === 'ADDED' && event.object.metadata?.name === 'web-2');
    await client.call('create', (options) => client.core.createNamespacedPod({ namespace: 'shop', body: webPod('web-2') }, options));
    await added;
    expect(names(watch.podsOnNode('w1'))).toEqual(['web-1', 'web-2']);

    const deleted = nextPodEvent((event) => event.type === 'DELETED' && event.object.metadata?.name === 'web-1');
    await client.call('delete', (options) => client.core.deleteNamespacedPod({ namespace: 'shop', name: 'web-1', gracePeriodSeconds: 0 }, options));
    await deleted;
    expect(names(watch.podsOnNode('w1'))).toEqual(['web-2']);
    expect(watch.podsOnNode('')).toEqual([]);
    expect(requests.filter((line) => line.startsWith('GET /api/v1/pods?') && !line.includes('watch=true'))).toHaveLength(1);
  });

  it('a pod watch the cluster refuses (a role from before the watch) leaves the cluster answering; its pods come from no cache', async () => {
    world = await startSimWithClient({ seed: SEED });
    const withoutPodWatch = await world.sim.createIdentity({
      roles: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: no-pod-watch}
rules:
  - {apiGroups: [""], resources: [nodes], verbs: [list, watch]}
  - {apiGroups: [""], resources: [pods], verbs: [list]}
  - {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [list, watch]}`,
      serviceAccount: { namespace: 'default', name: 'no-pod-watch' },
    });
    const refused = new Promise<Error>((resolve) => {
      connections = new ClusterConnections(directoryFor(withoutPodWatch.kubeconfig, world?.sim.url ?? ''), pino({ level: 'silent' }), {
        informer: { initialBackoffMs: 60_000, onError: (error) => resolve(error) },
      });
    });
    await connections?.ensure(CLUSTER_ID);
    expect((await refused).message).toBe('watch /api/v1/pods: HTTP 403');
    const watch = await connections?.watch(CLUSTER_ID);
    expect(watch?.nodes().map((node) => node.name)).toEqual(['w1']);
    expect(watch?.podsOnNode('w1')).toBeNull();
  });
});
