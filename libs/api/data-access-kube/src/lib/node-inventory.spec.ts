import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ccos/shared/util-timing/testing';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { listNodes, watchNodes, type NodeEvent } from './node-inventory';

const SEED = `
apiVersion: v1
kind: Node
metadata: {name: master-0, labels: {node-role.kubernetes.io/master: "", node-role.kubernetes.io/control-plane: ""}}
spec:
  taints: [{key: node-role.kubernetes.io/master, effect: NoSchedule}, {key: example.com/gpu, value: "yes", effect: PreferNoSchedule}]
status:
  conditions: [{type: Ready, status: "True"}]
  addresses: [{type: InternalIP, address: 10.0.0.10}, {type: Hostname, address: master-0}]
  nodeInfo: {kubeletVersion: v1.32.4}
  allocatable: {cpu: 3500m, memory: 15Gi, pods: "250"}
---
apiVersion: v1
kind: Node
metadata: {name: worker-1, labels: {node-role.kubernetes.io/worker: "", kubernetes.io/role: infra}}
spec: {unschedulable: true}
status:
  conditions: [{type: MemoryPressure, status: "False"}, {type: Ready, status: "False"}]
  addresses: [{type: InternalIP, address: 10.0.0.21}]
  nodeInfo: {kubeletVersion: v1.32.4}
  allocatable: {cpu: "4", memory: "16424Mi", pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: bare}
`;

describe('node inventory', () => {
  let world: SimWithClient;

  beforeAll(async () => {
    world = await startSimWithClient({ seed: SEED });
  });

  afterAll(async () => {
    await world?.stop();
  });

  it('summarises Nodes: roles, readiness, addresses, control-plane taints, kubelet, allocatable, age', async () => {
    const nodes = await listNodes(world.client);
    expect(nodes.map((n) => n.name)).toEqual(['bare', 'master-0', 'worker-1']);
    const [bare, master, worker] = nodes;
    expect(master).toMatchObject({
      roles: ['control-plane', 'master'],
      ready: true,
      readyStatus: 'True',
      unschedulable: false,
      addresses: [
        { type: 'InternalIP', address: '10.0.0.10' },
        { type: 'Hostname', address: 'master-0' },
      ],
      controlPlaneTaints: [{ key: 'node-role.kubernetes.io/master', value: null, effect: 'NoSchedule' }],
      schedulingTaints: [{ key: 'node-role.kubernetes.io/master', value: null, effect: 'NoSchedule' }],
      kubeletVersion: 'v1.32.4',
      allocatable: { cpuMillicores: 3500, memoryBytes: 15 * 2 ** 30, pods: 250 },
    });
    expect(master.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.now() - Date.parse(master.createdAt ?? '')).toBeLessThan(60_000);
    expect(worker).toMatchObject({ roles: ['infra', 'worker'], ready: false, readyStatus: 'False', unschedulable: true, controlPlaneTaints: [], allocatable: { cpuMillicores: 4000, memoryBytes: 16424 * 2 ** 20, pods: 110 } });
    expect(bare).toMatchObject({ roles: [], ready: false, readyStatus: 'Unknown', addresses: [], kubeletVersion: null, allocatable: { cpuMillicores: null, memoryBytes: null, pods: null } });
  });

  it('watches: initial ADDED, then changes; a heartbeat alone is not a change', async () => {
    const events: NodeEvent[] = [];
    const inventory = watchNodes(world.client, (event) => events.push(event));
    try {
      await inventory.synced;
      expect(events.map((e) => `${e.type} ${e.node.name}`)).toEqual(['ADDED bare', 'ADDED master-0', 'ADDED worker-1']);
      // Watch objects are plain JSON (dates as strings); summaries look the same as from a list.
      const listed = await listNodes(world.client);
      expect(inventory.nodes()).toEqual(listed);
      events.length = 0;

      const { client } = world;
      const status = (heartbeat: string, ready: string) => ({
        conditions: [{ type: 'Ready', status: ready, lastHeartbeatTime: new Date(heartbeat), lastTransitionTime: new Date('2026-01-01T00:00:00Z') }],
      });
      const read = () => client.call('read', (o) => client.core.readNodeStatus({ name: 'bare' }, o));
      await client.call('status', async (o) => client.core.replaceNodeStatus({ name: 'bare', body: { ...(await read()), status: status('2026-01-01T00:00:00Z', 'True') } }, o));
      await eventually(() => (events.length >= 1 ? true : undefined));
      await client.call('heartbeat', async (o) => client.core.replaceNodeStatus({ name: 'bare', body: { ...(await read()), status: status('2026-01-01T00:00:10Z', 'True') } }, o));
      await client.call('create', (o) => client.core.createNode({ body: { metadata: { name: 'worker-2', labels: { 'node-role.kubernetes.io/worker': '' } } } }, o));
      await client.call('delete', (o) => client.core.deleteNode({ name: 'worker-2' }, o));
      await eventually(() => (events.length >= 3 ? true : undefined));
      expect(events.map((e) => `${e.type} ${e.node.name}`)).toEqual(['MODIFIED bare', 'ADDED worker-2', 'DELETED worker-2']);
      expect(events[0].node.ready).toBe(true);
      expect(events[1].node.roles).toEqual(['worker']);
    } finally {
      await inventory.stop();
    }
  });
});
