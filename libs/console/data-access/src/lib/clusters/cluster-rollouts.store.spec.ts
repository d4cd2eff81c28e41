import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { ClusterRolloutsStore, type RolloutView } from './cluster-rollouts.store';

const rollout = (id: string, status: RolloutView['status'] = 'RUNNING'): RolloutView => ({
  id, clusterId: 'c-1', kind: 'REBOOT', status, maxUnavailable: 1, maxUnavailableIsPercent: false, maintenanceWindow: null, pauseOnAlerts: [],
  reason: null, reasonCode: null, reasonParams: null, waitingFor: null, waitingForCode: null, waitingForParams: null,
  createdBy: 'ops', createdAt: '2026-12-07T08:00:00Z', finishedAt: null,
  nodes: [{ nodeId: 'n-1', nodeName: 'w1', phase: 'DRAIN', startedAt: '2026-12-07T08:00:01Z', rebootedAt: null, applyRunId: null, finishedAt: null, problem: null, problemCode: null, problemParams: null }],
});

describe('a cluster\'s rollouts', () => {
  it('lists them, follows rolloutChanged, and lists again when a rollout it has not seen changes (started elsewhere)', async () => {
    const { store, api } = storeUnderTest(ClusterRolloutsStore);
    store.select('c-1');
    expect(api.pending('Rollouts')[0]?.variables).toEqual({ clusterId: 'c-1' });
    api.answer('Rollouts', { data: { rollouts: [rollout('r-1', 'SUCCEEDED')] } });
    await expect.poll(() => store.latest()?.id).toBe('r-1');

    const changes = api.subscription('RolloutChanged');
    expect(changes.variables).toEqual({ clusterId: 'c-1' });
    changes.send({ rolloutChanged: rollout('r-1', 'SUCCEEDED') });
    expect(api.pending('Rollouts')).toHaveLength(0);
    changes.send({ rolloutChanged: rollout('r-2') });
    await expect.poll(() => api.pending('Rollouts').length).toBe(1);
  });

  it('starts one and lists them again; pauses, resumes and cancels by id; keys a refusal by its field', async () => {
    const { store, api } = storeUnderTest(ClusterRolloutsStore);
    store.select('c-1');
    api.answer('Rollouts', { data: { rollouts: [] } });
    const input = { clusterId: 'c-1', kind: 'REBOOT' as const, maxUnavailable: 1, window: { cron: 'nightly', durationMinutes: 60, timeZone: 'UTC' } };
    const refused = store.start(input);
    api.answer('StartRollout', {
      error: new CombinedGraphQLErrors({ errors: [{ message: 'window.cron: "nightly" is not a cron expression', extensions: { code: 'BAD_USER_INPUT', field: 'input.window.cron', problem: 'is not a cron expression' } }] }),
    });
    expect((await refused).ok).toBe(false);
    expect(store.fieldErrors()['window.cron']).toBeTruthy();

    const previewing = store.preview({ ...input, window: null });
    expect(api.pending('RolloutPreview')[0]?.variables).toEqual({ input: { ...input, window: null } });
    const preview = { nodes: [], allowed: 1, windowOpen: null, windowChangesAt: null, firingAlerts: [], alertProblem: null, alertProblemCode: null, alertProblemParams: null };
    api.answer('RolloutPreview', { data: { rolloutPreview: preview } });
    expect(await previewing).toEqual({ ok: true, value: preview });
    expect(api.pending('Rollouts')).toHaveLength(0);

    const started = store.start({ ...input, window: null });
    expect(api.pending('StartRollout')[0]?.variables).toEqual({ input: { ...input, window: null } });
    api.answer('StartRollout', { data: { startRollout: rollout('r-3') } });
    expect((await started).ok).toBe(true);
    expect(api.pending('Rollouts')).toHaveLength(1);

    for (const [action, mutation] of [['pause', 'PauseRollout'], ['resume', 'ResumeRollout'], ['cancel', 'CancelRollout']] as const) {
      const acting = store.act(action, 'r-3');
      expect(store.busy()).toBe(action);
      expect(api.pending(mutation)[0]?.variables).toEqual({ id: 'r-3' });
      api.answer(mutation, { data: { [`${action}Rollout`]: rollout('r-3', action === 'pause' ? 'PAUSED' : action === 'resume' ? 'RUNNING' : 'CANCELLED') } });
      expect((await acting).ok).toBe(true);
      expect(store.busy()).toBeNull();
    }
  });
});
