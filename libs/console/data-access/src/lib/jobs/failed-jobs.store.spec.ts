import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { type FailedJob, FailedJobsStore } from './failed-jobs.store';

const job = (id: string) => ({ id, task: 'node.provision', nodeId: `n-${id}`, lastError: 'No space left on device' }) as unknown as FailedJob;
const ids = (store: FailedJobsStore) => store.jobs().map((shown) => shown.id);

describe('the Failed jobs page', () => {
  it('lists the failed jobs, and a retried one leaves the list until a reload shows it failed again', async () => {
    const { store, api } = storeUnderTest(FailedJobsStore);
    api.answer('FailedJobs', { data: { failedJobs: [job('7'), job('5')] } });
    await expect.poll(() => ids(store)).toEqual(['7', '5']);

    const retrying = store.retry('7');
    expect(api.pending('RetryJob')[0]?.variables).toEqual({ id: '7' });
    api.answer('RetryJob', { data: { retryJob: true } });
    expect((await retrying).ok).toBe(true);
    expect(ids(store)).toEqual(['5']);

    store.reload();
    api.answer('FailedJobs', { data: { failedJobs: [job('7'), job('5')] } });
    await expect.poll(() => ids(store)).toEqual(['7', '5']);
  });

  it('keeps a job whose retry was refused in the list, with the reason', async () => {
    const { store, api } = storeUnderTest(FailedJobsStore);
    api.answer('FailedJobs', { data: { failedJobs: [job('9')] } });
    await expect.poll(() => ids(store)).toEqual(['9']);

    const retrying = store.retry('9');
    api.answer('RetryJob', { error: new CombinedGraphQLErrors({ errors: [{ message: 'failed job 9 not found', extensions: { code: 'NOT_FOUND' } }] }) });
    const outcome = await retrying;
    expect(outcome.ok).toBe(false);
    expect(ids(store)).toEqual(['9']);
  });
});
