import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { type Csr, CsrReviewStore, withCsrChange } from './csr-review.store';

const csr = (name: string, createdAt: string, status: Csr['status'] = 'PENDING') => ({ clusterId: 'c-1', name, createdAt, status }) as Csr;
const names = (csrs: readonly Csr[]) => csrs.map((entry) => entry.name);

describe('the CSR list of the certificates page, as changes arrive', () => {
  const listed = [csr('csr-b', '2026-11-30T05:02:00Z'), csr('csr-a', '2026-11-30T05:01:00Z')];

  it('puts a new CSR in its place, newest first', () => {
    expect(names(withCsrChange(listed, { clusterId: 'c-1', name: 'csr-c', kind: 'ADDED', csr: csr('csr-c', '2026-11-30T05:03:00Z') } as never))).toEqual(['csr-c', 'csr-b', 'csr-a']);
    expect(names(withCsrChange(listed, { clusterId: 'c-1', name: 'csr-0', kind: 'ADDED', csr: csr('csr-0', '2026-11-30T05:00:00Z') } as never))).toEqual(['csr-b', 'csr-a', 'csr-0']);
  });

  it('drops a deleted CSR, and leaves the list as it is for one it already shows or never had', () => {
    expect(names(withCsrChange(listed, { clusterId: 'c-1', name: 'csr-b', kind: 'DELETED', csr: null } as never))).toEqual(['csr-a']);
    expect(withCsrChange(listed, { clusterId: 'c-1', name: 'csr-x', kind: 'DELETED', csr: null } as never)).toBe(listed);
    expect(withCsrChange(listed, { clusterId: 'c-1', name: 'csr-a', kind: 'UPDATED', csr: csr('csr-a', '2026-11-30T05:01:00Z', 'APPROVED') } as never)).toBe(listed);
  });
});

describe('deciding a CSR', () => {
  it('sends the reason of an approval only when it is forced, and shows the CSR busy meanwhile', async () => {
    const { store, api } = storeUnderTest(CsrReviewStore);
    store.select('c-1');
    const plain = store.approve('csr-a', false, 'ignored');
    expect(store.isDeciding('csr-a')).toBe(true);
    expect(api.pending('ApproveCsr')[0]?.variables).toEqual({ clusterId: 'c-1', name: 'csr-a', force: false, reason: null });
    api.answer('ApproveCsr', { data: { approveCsr: csr('csr-a', '2026-11-30T05:01:00Z', 'APPROVED') } });
    expect(await plain).toMatchObject({ ok: true, value: { status: 'APPROVED' } });
    expect(store.isDeciding('csr-a')).toBe(false);
    void store.approve('csr-b', true, 'the node was re-imaged');
    expect(api.pending('ApproveCsr')[0]?.variables).toMatchObject({ force: true, reason: 'the node was re-imaged' });
  });

  it('shows the deny dialog the problem with its reason field, and clears it on the next try', async () => {
    const { store, api } = storeUnderTest(CsrReviewStore);
    store.select('c-1');
    const denied = store.deny('csr-a', '');
    api.answer('DenyCsr', { error: new CombinedGraphQLErrors({ errors: [{ message: 'reason: must not be empty', extensions: { code: 'BAD_USER_INPUT', field: 'reason' } }] }) });
    expect(await denied).toMatchObject({ ok: false });
    expect(store.denyFieldErrors()).toEqual({ reason: 'reason: must not be empty' });
    void store.deny('csr-a', 'not ours');
    expect(store.denyFieldErrors()).toEqual({});
  });

  it('refuses to decide before a cluster is chosen, without asking the server', async () => {
    const { store, api } = storeUnderTest(CsrReviewStore);
    expect(await store.approve('csr-a', false)).toMatchObject({ ok: false, problems: [{ code: 'UNKNOWN' }] });
    expect(api.requests).toEqual([]);
  });
});
