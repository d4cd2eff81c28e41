import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { type ClusterRemediation, ClusterRemediationStore } from './cluster-remediation.store';

const policy = { enabled: true, paused: false, unhealthySeconds: 300, rungTimeoutSeconds: 300, maxUnhealthy: 1, maxUnhealthyIsPercent: false };
const remediation = (held: ClusterRemediation['held'] = null) => ({ clusterId: 'c-1', policy, held }) as ClusterRemediation;

describe('a cluster\'s remediation', () => {
  it('reads the cluster\'s policy and hold, and reads them again after a policy is saved', async () => {
    const { store, api } = storeUnderTest(ClusterRemediationStore);
    store.select('c-1');
    expect(api.pending('ClusterRemediation')[0]?.variables).toEqual({ clusterId: 'c-1' });
    api.answer('ClusterRemediation', { data: { clusterRemediation: remediation({ unhealthy: 2, members: 3, cap: 1, since: '2026-12-05T04:00:00Z', message: 'remediation held: 2 of 3 members unhealthy, cap 1', messageCode: 'remediation.held', messageParams: {} }) } });
    await expect.poll(() => store.remediation()?.held?.unhealthy).toBe(2);

    const saving = store.save('c-1', { ...policy, paused: true });
    expect(api.pending('SetRemediationPolicy')[0]?.variables).toEqual({ clusterId: 'c-1', input: { ...policy, paused: true } });
    api.answer('SetRemediationPolicy', { data: { setRemediationPolicy: remediation() } });
    expect((await saving).ok).toBe(true);
    expect(api.pending('ClusterRemediation')).toHaveLength(1);
  });

  it('keys the API\'s refusal by the field it names', async () => {
    const { store, api } = storeUnderTest(ClusterRemediationStore);
    store.select('c-1');
    const saving = store.save('c-1', { ...policy, maxUnhealthy: 150, maxUnhealthyIsPercent: true });
    api.answer('SetRemediationPolicy', {
      error: new CombinedGraphQLErrors({ errors: [{ message: 'maxUnhealthy: must be between 0 and 100', extensions: { code: 'BAD_USER_INPUT', field: 'input.maxUnhealthy', problem: 'must be between 0 and 100' } }] }),
    });
    expect((await saving).ok).toBe(false);
    expect(store.fieldErrors()['maxUnhealthy']).toBeTruthy();
  });
});
