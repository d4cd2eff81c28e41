import { describe, expect, it } from 'vitest';
import type { Inventory, InventoryHost } from './inventory-document';
import { parseInventory } from './inventory-document';
import { exportInventory } from './inventory-export';
import { type CurrentNode, planInventory } from './inventory-plan';

const host = (hostname: string, ip: string | null, extra: Partial<InventoryHost> = {}): InventoryHost => ({
  hostname, ip, sshPort: 22, sshUser: 'root', credential: { passwordEnv: 'P' }, labels: [], taints: [], pool: null, remove: false, ...extra,
});
const node = (id: string, hostname: string, ip: string, extra: Partial<CurrentNode> = {}): CurrentNode => ({
  id, hostname, ip, status: 'JOINED', origin: 'ADDED', labels: [], taints: [], ...extra,
});
const inventory = (...hosts: InventoryHost[]): Inventory => ({ cluster: 'lab', pools: [], hosts });

describe('planInventory', () => {
  it('adds every host of a file on an empty cluster', () => {
    const plan = planInventory(inventory(host('w1', '198.18.0.1'), host('w2', '198.18.0.2'), host('w3', '198.18.0.3')), []);
    expect(plan.changes.map((change) => `${change.kind} ${change.hostname}`)).toEqual(['ADD w1', 'ADD w2', 'ADD w3']);
    expect(plan).toMatchObject({ conflicts: [], attention: [], unchanged: 0 });
  });

  it('plans exactly one removal and one label change after the file is edited, and nothing once applied', () => {
    const nodes = [node('1', 'w1', '198.18.0.1'), node('2', 'w2', '198.18.0.2', { labels: [{ key: 'zone', value: 'a' }] }), node('3', 'w3', '198.18.0.3')];
    const edited = inventory(host('w1', '198.18.0.1'), host('w2', '198.18.0.2', { labels: [{ key: 'zone', value: 'b' }] }), host('w3', null, { remove: true }));
    const plan = planInventory(edited, nodes);
    expect(plan.changes).toEqual([
      { kind: 'RELABEL', hostname: 'w2', nodeId: '2', marks: { from: { labels: [{ key: 'zone', value: 'a' }], taints: [] }, to: { labels: [{ key: 'zone', value: 'b' }], taints: [] } } },
      { kind: 'REMOVE', hostname: 'w3', nodeId: '3' },
    ]);
    expect(plan.unchanged).toBe(1);
    const applied = [nodes[0], { ...nodes[1], labels: [{ key: 'zone', value: 'b' }] }, { ...nodes[2], status: 'REMOVED' as const }];
    expect(planInventory(edited, applied)).toMatchObject({ changes: [], conflicts: [], unchanged: 3 });
  });

  it('finds the state it was made from changed when a named node changes, not when another does', () => {
    const nodes = [node('1', 'w1', '198.18.0.1'), node('9', 'other', '198.18.0.9')];
    const file = inventory(host('w1', '198.18.0.1'));
    const before = planInventory(file, nodes).fingerprint;
    expect(planInventory(file, [nodes[0], { ...nodes[1], status: 'REMOVING' }]).fingerprint).toBe(before);
    expect(planInventory(file, [{ ...nodes[0], status: 'REMOVING' }, nodes[1]]).fingerprint).not.toBe(before);
    expect(planInventory(file, [{ ...nodes[0], labels: [{ key: 'x', value: '' }] }, nodes[1]]).fingerprint).not.toBe(before);
  });

  it('names what it cannot apply: a moved address, an address another node has, a discovered node to relabel', () => {
    const nodes = [node('1', 'w1', '198.18.0.1'), node('2', 'w2', '198.18.0.2'), node('3', 'cp1', '198.18.0.3', { origin: 'DISCOVERED' })];
    const plan = planInventory(inventory(host('w1', '198.18.0.5'), host('w9', '198.18.0.2'), host('cp1', '198.18.0.3', { labels: [{ key: 'a', value: 'b' }] })), nodes);
    expect(plan.changes).toEqual([]);
    expect(plan.conflicts.map((text) => text.message)).toEqual([
      'the cluster has w1 at 198.18.0.1, not 198.18.0.5: remove it, then add it at the new address',
      'the address 198.18.0.2 belongs to w2 in the cluster',
      'cp1 joined the cluster without this service (a discovered node): the inventory can remove it but not change its labels or taints',
    ]);
  });

  it('installs a host that waits for it, forgets one that never joined, and leaves failed hosts to an operator', () => {
    const nodes = [node('1', 'w1', '198.18.0.1', { status: 'READY_TO_INSTALL' }), node('2', 'w2', '198.18.0.2', { status: 'INSTALL_FAILED' }), node('3', 'w3', '198.18.0.3', { status: 'AUTH_FAILED' })];
    const plan = planInventory(inventory(host('w1', '198.18.0.1'), host('w2', '198.18.0.2'), host('w3', null, { remove: true })), nodes);
    expect(plan.changes).toEqual([{ kind: 'INSTALL', hostname: 'w1', nodeId: '1' }, { kind: 'FORGET', hostname: 'w3', nodeId: '3' }]);
    expect(plan.attention).toEqual([{ hostname: 'w2', nodeId: '2', status: 'INSTALL_FAILED' }]);
  });
});

describe('exportInventory', () => {
  it('writes the hosts added here as a file that plans to no change', () => {
    const nodes = [
      { ...node('1', 'w1', '198.18.0.1', { labels: [{ key: 'zone', value: 'a' }], taints: [{ key: 'gpu', value: null, effect: 'NoSchedule' }] }), sshPort: 2222, sshUser: 'core' },
      { ...node('2', 'w2', '198.18.0.2'), sshPort: 22, sshUser: 'root' },
      { ...node('3', 'cp1', '198.18.0.3', { origin: 'DISCOVERED' }), sshPort: 22, sshUser: null },
      { ...node('4', 'old', '198.18.0.4', { status: 'REMOVED' }), sshPort: 22, sshUser: 'root' },
    ];
    const text = exportInventory('lab', nodes);
    expect(text).toBe(`apiVersion: ccos-scaler.io/v1
kind: Inventory
cluster: lab
hosts:
  - hostname: w1
    ip: 198.18.0.1
    sshPort: 2222
    sshUser: core
    labels:
      zone: a
    taints:
      - key: gpu
        effect: NoSchedule
  - hostname: w2
    ip: 198.18.0.2
`);
    const parsed = parseInventory(text);
    expect(parsed.ok && planInventory(parsed.inventory, nodes)).toMatchObject({ changes: [], conflicts: [], unchanged: 2 });
  });
});

describe('planInventory with pools', () => {
  const gpu = { name: 'gpu', minSize: 0, maxSize: 3, profile: { cpuCores: 8, memoryBytes: 32 * 2 ** 30, ephemeralStorageBytes: 20 * 2 ** 30, maxPods: 110, arch: 'amd64' }, labels: [{ key: 'gpu', value: 'a100' }], taints: [] };
  const withPools = (...hosts: InventoryHost[]): Inventory => ({ cluster: 'lab', pools: [gpu], hosts });

  it('creates a pool the cluster lacks and adds its spares; then plans no change', () => {
    const plan = planInventory(withPools(host('s1', '198.18.0.21', { pool: 'gpu' }), host('s2', '198.18.0.22', { pool: 'gpu' })), []);
    expect(plan.changes.map((change) => `${change.kind} ${change.hostname ?? ''}`)).toEqual(['CREATE_POOL ', 'ADD_SPARE s1', 'ADD_SPARE s2']);
    const nodes = [node('1', 's1', '198.18.0.21', { status: 'READY_TO_INSTALL', labels: gpu.labels }), node('2', 's2', '198.18.0.22', { labels: gpu.labels })];
    const memberships = new Map([['1', 'gpu'], ['2', 'gpu']]);
    // A spare waiting for a scale-up is no INSTALL: the pool installs it.
    expect(planInventory(withPools(host('s1', '198.18.0.21', { pool: 'gpu' }), host('s2', '198.18.0.22', { pool: 'gpu' })), nodes, { pools: [gpu], memberships })).toMatchObject({ changes: [], conflicts: [], unchanged: 2 });
  });

  it('names a pool that differs, a host in another pool than the file says, and a pool member to remove, as conflicts', () => {
    const nodes = [node('1', 's1', '198.18.0.21'), node('2', 'w2', '198.18.0.2')];
    const plan = planInventory(withPools(host('s1', '198.18.0.21', { pool: 'gpu' }), host('w2', null, { remove: true })), nodes, { pools: [{ ...gpu, maxSize: 5 }], memberships: new Map([['2', 'gpu']]) });
    expect(plan.changes).toEqual([]);
    expect(plan.conflicts.map((text) => text.message)).toEqual([
      'pool gpu differs from the file (maxSize 5 → 3): node groups are not changed by an inventory; change the file to match, or recreate the pool',
      's1 is in no pool in the cluster, but the file puts it in pool gpu: remove it, then add it again where the file says',
      'w2 is a member of pool gpu: scale the pool down instead of removing it',
    ]);
  });

  it('exports pools and their members so that the export plans no change', () => {
    const nodes = [{ ...node('1', 's1', '198.18.0.21', { labels: gpu.labels }), sshPort: 22, sshUser: 'root' }];
    const current = { pools: [gpu], memberships: new Map([['1', 'gpu']]) };
    const text = exportInventory('lab', nodes, current);
    expect(text).toContain('pools:\n  - name: gpu\n    minSize: 0\n    maxSize: 3\n    profile:\n      cpuCores: 8\n      memoryGiB: 32\n');
    expect(text).toContain('  - hostname: s1\n    ip: 198.18.0.21\n    pool: gpu\n');
    const parsed = parseInventory(text);
    expect(parsed.ok && planInventory(parsed.inventory, nodes, current)).toMatchObject({ changes: [], conflicts: [], unchanged: 1 });
  });
});
