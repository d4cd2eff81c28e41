import { describe, expect, it } from 'vitest';
import type { NodeGroupEntity } from '@ccos/api/data-access-db';
import { encodeTemplateNode, templateCapacity, v1NodeType } from './template-node';

const group = {
  id: '6a1d1c4e-0000-4000-8000-000000000001',
  name: 'pool-a',
  labels: [{ key: 'pool', value: 'a' }],
  taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }],
  profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3, ephemeralStorageBytes: 0, maxPods: 110, arch: 'arm64' },
} as unknown as NodeGroupEntity;

describe('template v1.Node', () => {
  it('writes the field numbers of k8s.io/api (what v1.Node#Unmarshal reads)', () => {
    const type = v1NodeType();
    // metadata = 1, ObjectMeta.name = 1
    expect([...type.encode(type.fromObject({ metadata: { name: 'n' } })).finish()]).toEqual([0x0a, 0x03, 0x0a, 0x01, 0x6e]);
    // spec = 2, NodeSpec.providerID = 3
    expect([...type.encode(type.fromObject({ spec: { providerID: 'p' } })).finish()]).toEqual([0x12, 0x03, 0x1a, 0x01, 0x70]);
    // status = 3, NodeStatus.allocatable = 2 (map entry key 1, value Quantity.string 1)
    expect([...type.encode(type.fromObject({ status: { allocatable: { cpu: { string: '2' } } } })).finish()]).toEqual([0x1a, 0x0c, 0x12, 0x0a, 0x0a, 0x03, 0x63, 0x70, 0x75, 0x12, 0x03, 0x0a, 0x01, 0x32]);
    // ObjectMeta.labels = 11
    expect([...type.encode(type.fromObject({ metadata: { labels: { a: 'b' } } })).finish()]).toEqual([0x0a, 0x08, 0x5a, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62]);
  });

  it("carries the group's labels, taints, capacity and a Ready condition", () => {
    const type = v1NodeType();
    const decoded = type.toObject(type.decode(encodeTemplateNode(group, new Date('2026-12-01T00:00:00Z'))), { longs: String }) as Record<string, Record<string, unknown>>;
    expect(decoded['metadata']).toMatchObject({ name: 'template-node-for-pool-a', labels: { pool: 'a', 'kubernetes.io/arch': 'arm64', 'kubernetes.io/os': 'linux' } });
    expect(decoded['spec']).toEqual({ taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] });
    expect(decoded['status']).toMatchObject({
      allocatable: { cpu: { string: '2' }, memory: { string: String(4 * 1024 ** 3) }, pods: { string: '110' }, 'ephemeral-storage': { string: '0' } },
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: { seconds: '1796083200' } }],
      nodeInfo: { operatingSystem: 'linux', architecture: 'arm64' },
    });
  });

  it('plans with the smallest of the spares as their hosts reported, the profile when none told', () => {
    const gib = 1024 ** 3;
    expect(templateCapacity(group, [{ cpus: 8, memoryBytes: 31 * gib }, { cpus: 4, memoryBytes: 62 * gib }, undefined])).toEqual({ cpuCores: 4, memoryBytes: 31 * gib, source: 'spares' });
    expect(templateCapacity(group, [undefined, { cpus: null, memoryBytes: null }])).toEqual({ cpuCores: 2, memoryBytes: 4 * gib, source: 'profile' });
    const type = v1NodeType();
    const decoded = type.toObject(type.decode(encodeTemplateNode(group, new Date(), templateCapacity(group, [{ cpus: 6, memoryBytes: 7 * gib }]))), { longs: String }) as Record<string, Record<string, unknown>>;
    expect(decoded['status']).toMatchObject({ capacity: { cpu: { string: '6' }, memory: { string: String(7 * gib) } }, allocatable: { cpu: { string: '6' }, memory: { string: String(7 * gib) } } });
    expect(decoded['metadata']).toMatchObject({ annotations: { 'ccos-scaler.io/template-capacity-from': 'spares' } });
  });
});
