import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { type ApprovalRequestView, ClusterApprovalsStore } from './cluster-approvals.store';

const request = (id: string, status = 'PENDING'): ApprovalRequestView => ({
  id, clusterId: 'c-1', action: 'REMOVE_NODE', target: 'w1', params: { nodeId: 'n-1' }, preview: { pods: [{ pod: 'default/handmade', action: 'DELETE' }] },
  requestedBy: 'alice', requestedAt: '2026-12-07T08:00:00Z', expiresAt: '2026-12-07T09:00:00Z', status,
  decidedBy: status === 'PENDING' ? null : 'bob', decidedAt: null, decisionReason: null, outcome: null, outcomeCode: null, outcomeParams: null,
});

describe('a cluster\'s four-eyes approvals', () => {
  it('shows what each message of the live list says, the waiting ones apart from the decided', () => {
    const { store, api } = storeUnderTest(ClusterApprovalsStore);
    store.select('c-1');
    const changes = api.subscription('ApprovalRequestsChanged');
    expect(changes.variables).toEqual({ clusterId: 'c-1' });
    expect(store.loading()).toBe(true);
    changes.send({ approvalRequestsChanged: [request('a-2'), request('a-1', 'EXPIRED')] });
    expect(store.pending().map((shown) => shown.id)).toEqual(['a-2']);
    expect(store.decided().map((shown) => shown.id)).toEqual(['a-1']);
    changes.send({ approvalRequestsChanged: [request('a-2', 'APPROVED'), request('a-1', 'EXPIRED')] });
    expect(store.pending()).toEqual([]);
  });

  it('approves by id, busy meanwhile; a rejection without a reason is keyed by its field', async () => {
    const { store, api } = storeUnderTest(ClusterApprovalsStore);
    store.select('c-1');
    const approving = store.approve('a-2');
    expect(store.busy()).toBe('a-2');
    expect(api.pending('ApproveRequest')[0]?.variables).toEqual({ id: 'a-2' });
    api.answer('ApproveRequest', { data: { approveRequest: request('a-2', 'APPROVED') } });
    expect(await approving).toMatchObject({ ok: true, value: { status: 'APPROVED' } });
    expect(store.busy()).toBeNull();

    const rejecting = store.reject('a-3', '');
    api.answer('RejectRequest', { error: new CombinedGraphQLErrors({ errors: [{ message: 'reason: is required', extensions: { code: 'BAD_USER_INPUT', field: 'reason', problem: 'is required' } }] }) });
    expect((await rejecting).ok).toBe(false);
    expect(store.fieldErrors()['reason']).toBeTruthy();
  });
});
