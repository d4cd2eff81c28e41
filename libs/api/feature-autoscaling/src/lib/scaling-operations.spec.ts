import { describe, expect, it } from 'vitest';
import { bare, formatServerText, message } from '@ccos/shared/messages';
import { useNodeGroupWorld } from '../testing/node-group-world';
import { AutoscalingRefusal, placeholderId, providerIdOf } from './node-group-model';

async function refusalOf(call: Promise<unknown>): Promise<AutoscalingRefusal> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AutoscalingRefusal);
  return error as AutoscalingRefusal;
}

describe('scaling operations on a real database, the other features faked', () => {
  const world = useNodeGroupWorld();

  it.each([
    ['a size increase that is not positive', () => world().groups.scaling.increaseSize(world().clusterId, 'pool-a', 0), 'INVALID_ARGUMENT', 'autoscaling.refusal.increaseNotPositive', { delta: '0' }, 'size increase must be positive, got 0', '扩容数量必须为正数，收到的是 0'],
    ['a target decrease that is not negative', () => world().groups.scaling.decreaseTargetSize(world().clusterId, 'pool-a', 2), 'INVALID_ARGUMENT', 'autoscaling.refusal.decreaseNotNegative', { delta: '2' }, 'size decrease must be negative, got 2', '缩减数量必须为负数，收到的是 2'],
    ['an unknown group to scale up', () => world().groups.scaling.increaseSize(world().clusterId, 'pool-y', 1), 'NOT_FOUND', 'autoscaling.refusal.groupNotFound', { name: 'pool-y' }, 'node group "pool-y" not found', '未找到节点组“pool-y”'],
  ] as const)('refuses %s by code, in English and Chinese', async (_case, call, status, code, params, english, chinese) => {
    const refusal = await refusalOf(call());
    expect(refusal.code).toBe(status);
    expect(refusal.message).toBe(english);
    expect(refusal.text).toEqual({ code, params, message: english });
    expect(formatServerText('zh-CN', refusal.text.code, refusal.text.params, null)).toBe(chinese);
  });

  it('scales up: reserves the spares there are and installs them as one batch; the reservation no spare fills is out of resources', async () => {
    const group = await world().createGroup('up');
    const spare = await world().addSpare(group, 'up-1');
    expect(await world().memberState(spare)).toBe('SPARE');

    expect(await world().groups.scaling.increaseSize(world().clusterId, 'up', 2)).toEqual({ reserved: 1, missing: 1 });
    expect(world().ports.batches.at(-1)).toEqual({ clusterId: world().clusterId, nodeIds: [spare], actor: 'cluster-autoscaler' });
    expect(await world().memberState(spare)).toBe('RESERVED');
    const providerId = providerIdOf({ id: world().clusterId, name: world().clusterName }, spare);
    expect((await world().nodes.get(spare)).providerId).toBe(providerId);
    expect((await world().group(group)).targetSize).toBe(2);
    expect(await world().activity(group)).toEqual(['SPARE_ADDED up-1', 'SPARE_READY up-1', 'RESERVE up-1', 'OUT_OF_RESOURCES', 'INSTALL up-1']);
    const instances = await world().groups.registry.instances(await world().group(group));
    expect(instances.map(({ id, state, error }) => [id, state, error?.code ?? null, error?.errorClass ?? null])).toEqual([
      [providerId, 'CREATING', null, null],
      [placeholderId(world().clusterName, 'up', 1), 'CREATING', 'NO_SPARE_HOSTS', 'OUT_OF_RESOURCES'],
    ]);

    const tooLarge = await refusalOf(world().groups.scaling.increaseSize(world().clusterId, 'up', 2));
    expect(tooLarge.text.code).toBe('autoscaling.refusal.increaseTooLarge');
    expect((await world().group(group)).targetSize).toBe(2);

    // The placeholder is given back by a target decrease; the reserved member keeps its place.
    await refusalOf(world().groups.scaling.decreaseTargetSize(world().clusterId, 'up', -2));
    await world().groups.scaling.decreaseTargetSize(world().clusterId, 'up', -1);
    expect((await world().group(group)).targetSize).toBe(1);
    expect((await world().activity(group)).at(-1)).toBe('DECREASE_TARGET');
  });

  it('scales down a named node: lowers the target, removes it, and its host comes back to the pool through the checks again', async () => {
    const group = await world().createGroup('down');
    const member = await world().addSpare(group, 'down-1');
    await world().groups.scaling.increaseSize(world().clusterId, 'down', 1);
    await world().drive(member, 'INSTALL_STARTED', 'NODE_READY');
    await expect.poll(() => world().activity(group)).toContain(`INSTALLED ${(await world().nodes.get(member)).hostname}`);
    const providerId = (await world().nodes.get(member)).providerId ?? '';

    await world().groups.scaling.deleteNodes(world().clusterId, 'down', [providerId]);
    expect(await world().memberState(member)).toBe('DELETING');
    expect((await world().group(group)).targetSize).toBe(0);
    const removal = world().ports.removals.find((started) => started.nodeId === member);
    expect(removal).toBeDefined();

    await world().drive(member, 'REMOVAL_STARTED', 'REMOVAL_SUCCEEDED');
    removal?.end('SUCCEEDED');
    await world().groups.scaling.settled();
    expect(await world().memberState(member)).toBe('RETIRED');
    const successor = (await world().nodes.get(member)).successorNodeId;
    expect(successor).toBeTruthy();
    expect(world().ports.checked).toEqual([successor]);
    await expect.poll(() => world().activity(group)).toEqual(['SPARE_ADDED down-1', 'SPARE_READY down-1', 'RESERVE down-1', 'INSTALL down-1', 'INSTALLED down-1', 'DELETE down-1', 'RETURN_TO_POOL down-1']);
    expect(await world().memberState(successor ?? '')).toBe('SPARE');
    expect((await world().nodes.get(successor ?? '')).hostname).toBe('down-1');
    expect((await world().groups.registry.membersOf(group.id)).map((row) => [row.node?.hostname, row.state])).toEqual([['down-1', 'SPARE']]);
  });

  it('keeps a member whose removal fails running, and gives the target back', async () => {
    const group = await world().createGroup('stays', { minSize: 0 });
    const member = await world().addSpare(group, 'stays-1');
    await world().groups.scaling.increaseSize(world().clusterId, 'stays', 1);
    await world().drive(member, 'INSTALL_STARTED', 'NODE_READY');
    await expect.poll(() => world().activity(group)).toContain(`INSTALLED ${(await world().nodes.get(member)).hostname}`);

    const [victim] = await world().groups.scaling.scaleDownBy(world().clusterId, 'stays', 1, 'operator');
    expect(victim?.candidate.hostname).toBe('stays-1');
    expect((await world().group(group)).targetSize).toBe(0);
    world().ports.removals.find((started) => started.nodeId === member)?.end('FAILED', 'the drain timed out');
    await world().groups.scaling.settled();
    expect(await world().memberState(member)).toBe('RUNNING');
    expect((await world().group(group)).targetSize).toBe(1);
    const [latest] = await world().store.activitiesOf(group.id, 1);
    expect(latest).toMatchObject({ kind: 'DELETE_FAILED', hostname: 'stays-1', reasonCoded: { code: 'autoscaling.removalEnded' } });
    expect(latest?.reason).toContain('the drain timed out');
  });

  it('refuses a scale-down below the minimum or of a node outside the group, changing nothing', async () => {
    const group = await world().createGroup('floor', { minSize: 1 });
    const member = await world().addSpare(group, 'floor-1');
    await world().groups.scaling.increaseSize(world().clusterId, 'floor', 1);
    const providerId = (await world().nodes.get(member)).providerId ?? '';
    expect((await refusalOf(world().groups.scaling.deleteNodes(world().clusterId, 'floor', [providerId]))).text.code).toBe('autoscaling.refusal.belowMinimum');
    expect((await refusalOf(world().groups.scaling.deleteNodes(world().clusterId, 'floor', ['ccos://elsewhere/1']))).text.code).toBe('autoscaling.refusal.notMember');
    expect(await world().memberState(member)).toBe('RESERVED');
    expect((await world().group(group)).targetSize).toBe(1);
  });

  it('replaces a member with a spare, keeping the target; without a spare it says why and starts nothing', async () => {
    const group = await world().createGroup('swap');
    const member = await world().addSpare(group, 'swap-1');
    await world().groups.scaling.increaseSize(world().clusterId, 'swap', 1);
    await world().drive(member, 'INSTALL_STARTED', 'NODE_READY');
    await expect.poll(() => world().activity(group)).toContain(`INSTALLED ${(await world().nodes.get(member)).hostname}`);
    expect(await world().groups.scaling.replaceableMembers(world().clusterId)).not.toContain(member);

    const none = await world().groups.scaling.replaceMember(member, 'remediation');
    expect(none).toMatchObject({ started: false, text: { code: 'autoscaling.noSpareToReplace' } });
    expect(await world().memberState(member)).toBe('RUNNING');

    const spare = await world().addSpare(group, 'swap-2');
    expect(await world().groups.scaling.replaceableMembers(world().clusterId)).toContain(member);
    const started = await world().groups.scaling.replaceMember(member, 'remediation', { skipHostSide: 'the host does not answer' });
    expect(started).toMatchObject({ started: true, text: { code: 'autoscaling.replacing' } });
    expect(await world().memberState(spare)).toBe('RESERVED');
    expect(await world().memberState(member)).toBe('DELETING');
    expect(world().ports.batches.at(-1)?.nodeIds).toEqual([spare]);
    expect(world().ports.removals.at(-1)).toMatchObject({ nodeId: member, options: { skipHostSide: 'the host does not answer' } });
    expect((await world().group(group)).targetSize).toBe(1);

    // The removal went on without the host: it stays out of the pool, reinstall required.
    await world().drive(member, 'REMOVAL_STARTED', 'REMOVAL_SUCCEEDED');
    await world().nodes.update(member, { reinstallRequired: bare(message('node.reinstallRequired.hostSkipped', { actor: 'remediation', reason: 'the host does not answer' })) });
    world().ports.removals.at(-1)?.end('SUCCEEDED');
    await world().groups.scaling.settled();
    expect(await world().memberState(member)).toBe('REINSTALL_REQUIRED');
    expect((await world().activity(group)).at(-1)).toBe('REINSTALL_REQUIRED swap-1');
  });
});
