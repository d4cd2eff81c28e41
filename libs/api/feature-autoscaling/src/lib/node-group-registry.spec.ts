import { describe, expect, it } from 'vitest';
import { refusalOf } from '@ccos/api/util-graphql/testing';
import { formatServerText } from '@ccos/shared/messages';
import { useNodeGroupWorld } from '../testing/node-group-world';
import { AutoscalingRefusal, providerIdOf } from './node-group-model';

describe('node group registry on a real database', () => {
  const world = useNodeGroupWorld();

  it.each([
    ['a name that is not a DNS label', { name: 'Pool_A' }, { code: 'BAD_USER_INPUT', field: 'input.name', problemCode: 'nodeGroup.name' }],
    ['a maximum below the minimum', { name: 'sizes', minSize: 3, maxSize: 2 }, { code: 'BAD_USER_INPUT', field: 'input.maxSize', problemCode: 'nodeGroup.sizes' }],
    ['an architecture no host has', { name: 'arch', profile: { cpuCores: 2, memoryBytes: 1, ephemeralStorageBytes: 0, maxPods: 110, arch: 'riscv64' } }, { code: 'BAD_USER_INPUT', field: 'input.profile', problemCode: 'nodeGroup.profile' }],
    ['a taint without an effect it knows', { name: 'taint', taints: [{ key: 'a', value: 'b', effect: 'Sometimes' as 'NoSchedule' }] }, { code: 'BAD_USER_INPUT', field: 'input.taints' }],
  ] as const)('refuses %s, naming the field, and stores nothing', async (_case, overrides, refusal) => {
    expect(await refusalOf(world().createGroup('x', overrides))).toMatchObject(refusal);
    expect(await world().groups.registry.groupsOf(world().clusterId)).toEqual([]);
  });

  it('refuses a second group of the same name in the cluster, and a cluster it does not know', async () => {
    await world().createGroup('twice');
    expect(await refusalOf(world().createGroup('twice'))).toMatchObject({ code: 'CONFLICT', field: 'input.name', problemCode: 'nodeGroup.nameTaken' });
    expect(await refusalOf(world().createGroup('elsewhere', { clusterId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ code: 'NOT_FOUND' });
    expect((await world().groups.registry.groupsOf(world().clusterId)).map((group) => group.name)).toEqual(['twice']);
  });

  it('refuses cluster-autoscaler a group it does not know by code, in English and Chinese', async () => {
    const refusal = await world().groups.registry.groupByName(world().clusterId, 'pool-x').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AutoscalingRefusal);
    expect((refusal as AutoscalingRefusal).code).toBe('NOT_FOUND');
    expect((refusal as AutoscalingRefusal).text).toEqual({ code: 'autoscaling.refusal.groupNotFound', params: { name: 'pool-x' }, message: 'node group "pool-x" not found' });
    expect(formatServerText('zh-CN', 'autoscaling.refusal.groupNotFound', { name: 'pool-x' }, null)).toBe('未找到节点组“pool-x”');
  });

  it('adds a spare through addNode with the group\'s labels and taints, and finds a member\'s group by its providerID', async () => {
    const group = await world().createGroup('spares', { taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] });
    const nodeId = await world().addSpare(group, 'spares-1');
    expect(world().ports.added.at(-1)).toMatchObject({ clusterId: world().clusterId, hostname: 'spares-1', labels: [{ key: 'pool', value: 'spares' }], taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] });
    expect((await world().groups.registry.membersOf(group.id)).map((row) => [row.node?.hostname, row.state])).toEqual([['spares-1', 'SPARE']]);
    expect(await world().groups.registry.currentSize(group)).toBe(0);
    expect(await world().groups.registry.groupForNode(world().clusterId, providerIdOf({ id: world().clusterId, name: world().clusterName }, nodeId))).toBeNull();

    await world().groups.scaling.increaseSize(world().clusterId, 'spares', 1);
    const providerId = (await world().nodes.get(nodeId)).providerId ?? '';
    expect((await world().groups.registry.groupForNode(world().clusterId, providerId))?.id).toBe(group.id);
    expect(await world().groups.registry.groupForNode(world().clusterId, '')).toBeNull();
    expect(await world().groups.registry.groupForNode(world().clusterId, 'ccos://other/1')).toBeNull();
    expect(await world().groups.registry.currentSize(await world().group(group))).toBe(1);
  });
});
