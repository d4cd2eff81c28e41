import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { capacityCheck, podRequests } from './capacity-check';

const RS_UID = 'c1f0c7e2-0000-4000-8000-0000000000a1';
const DS_UID = 'c1f0c7e2-0000-4000-8000-0000000000d5';
const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true}]`;
const requests = (cpu: string, memory: string) => `{requests: {cpu: ${cpu}, memory: ${memory}}}`;
const node = (name: string, extra: { ready?: string; spec?: string; cpu?: string; memory?: string } = {}) => `---
apiVersion: v1
kind: Node
metadata: {name: ${name}}
spec: ${extra.spec ?? '{}'}
status: {conditions: [{type: Ready, status: "${extra.ready ?? 'True'}"}], allocatable: {cpu: "${extra.cpu ?? '2'}", memory: ${extra.memory ?? '4Gi'}, pods: "110"}}`;
const pod = (name: string, on: string, resources: string, extra = '') => `---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: shop${extra}}
spec: {nodeName: ${on}, containers: [{name: c, image: x, resources: ${resources}}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}`;

const SEED = [
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: x}]}}}`,
  node('leaving'),
  node('worker-a'),
  node('worker-b', { cpu: '1', memory: '2Gi' }),
  node('master-0', { spec: '{taints: [{key: node-role.kubernetes.io/master, effect: NoSchedule}]}', cpu: '8', memory: '32Gi' }),
  node('worker-c', { ready: 'False', cpu: '8', memory: '32Gi' }),
  node('worker-d', { spec: '{unschedulable: true}', cpu: '8', memory: '32Gi' }),
  node('big-one'),
  pod('web-1', 'leaving', requests('500m', '1Gi'), `, ownerReferences: ${owner('ReplicaSet', 'web', RS_UID)}`),
  pod('web-2', 'leaving', requests('500m', '1Gi'), `, ownerReferences: ${owner('ReplicaSet', 'web', RS_UID)}`),
  pod('handmade', 'leaving', '{limits: {cpu: 100m, memory: 128Mi}}'),
  pod('agent-leaving', 'leaving', requests('1', '1Gi'), `, ownerReferences: ${owner('DaemonSet', 'agent', DS_UID)}`),
  pod('static-leaving', 'leaving', requests('1', '1Gi'), ', annotations: {kubernetes.io/config.mirror: abc}'),
  pod('busy-a', 'worker-a', requests('1500m', '1Gi')),
  pod('huge', 'big-one', requests('3', '1Gi'), `, ownerReferences: ${owner('ReplicaSet', 'web', RS_UID)}`),
].join('\n');

describe('capacityCheck', () => {
  let world: SimWithClient;

  beforeAll(async () => {
    world = await startSimWithClient({ seed: SEED });
    // A finished pod asks for nothing.
    world.sim.api.seed(world.sim.resource('pods'), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'job-done', namespace: 'shop' },
      spec: { nodeName: 'leaving', containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '4', memory: '8Gi' } } }] },
      status: { phase: 'Succeeded' },
    });
  });

  afterAll(async () => {
    await world?.stop();
  });

  it('fits the evicted pods onto the schedulable Ready nodes, ignoring DaemonSet, mirror and finished pods', async () => {
    const check = await capacityCheck(world.client, 'leaving');
    expect(check.fits).toBe(true);
    expect(check.detail).toMatchObject({
      node: 'leaving',
      required: { cpuMillicores: 1100, memoryBytes: 2 * 2 ** 30 + 128 * 2 ** 20, pods: 3 },
      // big-one is overcommitted by its own pod: no CPU left there.
      available: { cpuMillicores: 500 + 1000 + 0, memoryBytes: 3 * 2 ** 30 + 2 * 2 ** 30 + 3 * 2 ** 30, pods: 109 + 110 + 109 },
      unplaceable: [],
      unmanaged: ['shop/handmade'],
    });
    expect(check.detail.candidates.map((c) => c.name).sort()).toEqual(['big-one', 'worker-a', 'worker-b']);
    expect(check.detail.excluded).toEqual([
      { name: 'master-0', reason: 'tainted node-role.kubernetes.io/master:NoSchedule' },
      { name: 'worker-c', reason: 'not Ready (False)' },
      { name: 'worker-d', reason: 'cordoned' },
    ]);
    expect(check.detail.message).toBe('3 pods (1100m CPU, 2.1 GiB memory, 3 pods) fit on 3 schedulable Ready nodes (free: 1500m CPU, 8.0 GiB memory, 328 pods)');
  });

  it('says which pods fit nowhere', async () => {
    const check = await capacityCheck(world.client, 'big-one');
    expect(check.fits).toBe(false);
    expect(check.detail.unplaceable).toEqual(['shop/huge']);
    expect(check.detail.message).toMatch(/^1 of 1 pod does not fit on the 3 schedulable Ready nodes \(needed 3000m CPU.*\): shop\/huge$/);
  });

  it('computes pod requests like the scheduler: init containers, sidecars, overhead, limits as requests', () => {
    const spec = (extra: Partial<NonNullable<V1Pod['spec']>>): V1Pod => ({
      spec: { containers: [{ name: 'a', resources: { requests: { cpu: '200m', memory: '100Mi' } } }, { name: 'b', resources: { limits: { cpu: '300m', memory: '50Mi' } } }], ...extra },
    });
    expect(podRequests(spec({}))).toEqual({ cpuMillicores: 500, memoryBytes: 150 * 2 ** 20 });
    expect(podRequests(spec({ initContainers: [{ name: 'i', resources: { requests: { cpu: '2', memory: '10Mi' } } }] }))).toEqual({ cpuMillicores: 2000, memoryBytes: 150 * 2 ** 20 });
    expect(
      podRequests(
        spec({
          initContainers: [
            { name: 'sidecar', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '10Mi' } } },
            { name: 'i', resources: { requests: { cpu: '550m' } } },
          ],
          overhead: { cpu: '10m', memory: '1Mi' },
        }),
      ),
    ).toEqual({ cpuMillicores: 650 + 10, memoryBytes: 160 * 2 ** 20 + 2 ** 20 });
  });
});
