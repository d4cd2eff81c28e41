import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AuditLog, ClusterStore, NodeGroupStore, NodeStore } from '@ccos/api/data-access-db';
import type { EventBus } from '@ccos/api/util-graphql';
import { formatServerText } from '@ccos/shared/messages';
import type { AutoscalingPorts } from './autoscaling-ports';
import { AutoscalingRefusal, NodeGroupService } from './node-group.service';

/** No group exists; no call may reach anything else (each refusal comes before it). */
const groups = { findGroupByName: async () => null, withLockedGroup: async () => null } as unknown as NodeGroupStore;
const clusters = { find: async (id: string) => ({ id, name: 'lab' }) } as unknown as ClusterStore;
const service = new NodeGroupService(groups, clusters, {} as NodeStore, {} as AutoscalingPorts, {} as AuditLog, {} as EventBus, pino({ level: 'silent' }));

async function refusalOf(call: Promise<unknown>): Promise<AutoscalingRefusal> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AutoscalingRefusal);
  return error as AutoscalingRefusal;
}

describe('AutoscalingRefusal: what cluster-autoscaler is refused, by code beside its English details', () => {
  it.each([
    ['a size increase that is not positive', () => service.increaseSize('c1', 'pool-a', 0), 'INVALID_ARGUMENT', 'autoscaling.refusal.increaseNotPositive', { delta: '0' }, 'size increase must be positive, got 0', '扩容数量必须为正数，收到的是 0'],
    ['a target decrease that is not negative', () => service.decreaseTargetSize('c1', 'pool-a', 2), 'INVALID_ARGUMENT', 'autoscaling.refusal.decreaseNotNegative', { delta: '2' }, 'size decrease must be negative, got 2', '缩减数量必须为负数，收到的是 2'],
    ['an unknown group', () => service.groupByName('c1', 'pool-x'), 'NOT_FOUND', 'autoscaling.refusal.groupNotFound', { name: 'pool-x' }, 'node group "pool-x" not found', '未找到节点组“pool-x”'],
    ['an unknown group to scale up', () => service.increaseSize('c1', 'pool-y', 1), 'NOT_FOUND', 'autoscaling.refusal.groupNotFound', { name: 'pool-y' }, 'node group "pool-y" not found', '未找到节点组“pool-y”'],
  ] as const)('%s', async (_case, call, status, code, params, english, chinese) => {
    const refusal = await refusalOf(call());
    expect(refusal.code).toBe(status);
    expect(refusal.message).toBe(english);
    expect(refusal.text).toEqual({ code, params, message: english });
    expect(formatServerText('zh-CN', refusal.text.code, refusal.text.params, null)).toBe(chinese);
  });
});
