import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { type AuditEntry, AuditLogStore } from './audit-log.store';

const entries = (...ids: string[]) => ids.map((id) => ({ id, action: 'node.added' }) as unknown as AuditEntry);
const ids = (store: AuditLogStore) => store.entries().map((entry) => entry.id);

describe('the audit trail', () => {
  it('searches with only the filter fields given, then appends older pages after the last entry', async () => {
    const { store, api } = storeUnderTest(AuditLogStore);
    const searching = store.search({ actor: 'admin', action: '', target: null } as never);
    expect(store.loading()).toBe(true);
    expect(api.pending('AuditLog')[0]).toMatchObject({ variables: { filter: { actor: 'admin' }, first: 50, before: null }, fetchPolicy: 'network-only' });
    api.answer('AuditLog', { data: { auditLog: { entries: entries('a-9', 'a-8'), hasMore: true } } });
    await searching;
    expect(ids(store)).toEqual(['a-9', 'a-8']);
    expect(store.hasMore()).toBe(true);

    const more = store.loadMore();
    void store.loadMore();
    expect(api.pending('AuditLog')).toHaveLength(1);
    expect(api.pending('AuditLog')[0]?.variables).toMatchObject({ filter: { actor: 'admin' }, before: 'a-8' });
    api.answer('AuditLog', { data: { auditLog: { entries: entries('a-7'), hasMore: false } } });
    await more;
    expect(ids(store)).toEqual(['a-9', 'a-8', 'a-7']);
    expect(store.hasMore()).toBe(false);
  });

  it('shows the answer to the latest search only', async () => {
    const { store, api } = storeUnderTest(AuditLogStore);
    const first = store.search({ actor: 'alice' } as never);
    const second = store.search({ actor: 'bob' } as never);
    const [forAlice, forBob] = api.pending('AuditLog');
    forBob?.answer({ data: { auditLog: { entries: entries('b-1'), hasMore: false } } });
    forAlice?.answer({ data: { auditLog: { entries: entries('a-1'), hasMore: true } } });
    await Promise.all([first, second]);
    expect(ids(store)).toEqual(['b-1']);
    expect(store.hasMore()).toBe(false);
  });

  it('keeps the entries it shows when an older page fails, and says why', async () => {
    const { store, api } = storeUnderTest(AuditLogStore);
    const searching = store.search({});
    api.answer('AuditLog', { data: { auditLog: { entries: entries('a-2'), hasMore: true } } });
    await searching;
    const more = store.loadMore();
    api.pending('AuditLog')[0]?.fail(new TypeError('Failed to fetch'));
    await more;
    expect(ids(store)).toEqual(['a-2']);
    expect(store.problems().map((problem) => problem.code)).toEqual(['NETWORK']);
    expect(store.loading()).toBe(false);
  });
});
