import { describe, expect, it } from 'vitest';
import { allowedUnavailable, planRollout, type RolloutMember } from './rollout';

const member = (nodeId: string, fields: Partial<RolloutMember> = {}): RolloutMember => ({ nodeId, phase: 'PENDING', ready: true, unschedulable: false, ...fields });

describe('planRollout', () => {
  it('starts nodes in order up to the budget, counting the nodes it holds', () => {
    const members = [member('a'), member('b'), member('c')];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, members)).toMatchObject({ start: ['a'], unavailable: [], allowed: 1, finished: false });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, members).start).toEqual(['a', 'b']);

    const oneRebooting = [member('a', { phase: 'REBOOT' }), member('b'), member('c')];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, oneRebooting)).toMatchObject({ start: [], unavailable: ['a'] });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, oneRebooting).start).toEqual(['b']);
  });

  it('counts a node that is NotReady or cordoned by anyone against the budget, and never starts one', () => {
    const members = [member('a', { phase: 'DONE' }), member('b', { ready: false }), member('c'), member('d', { unschedulable: true })];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, members)).toMatchObject({ start: [], unavailable: ['b', 'd'] });
    expect(planRollout({ maxUnavailable: 3, isPercent: false }, members)).toMatchObject({ start: ['c'], unavailable: ['b', 'd'] });
    // A done node that went NotReady afterwards still takes a slot.
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, [member('a', { phase: 'DONE', ready: false }), member('b')]).start).toEqual([]);
  });

  it('counts a node remediation is working on against the budget and starts it only once remediation is over', () => {
    const members = [member('a', { remediating: true }), member('b')];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, members)).toMatchObject({ start: [], unavailable: ['a'] });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, members)).toMatchObject({ start: ['b'], unavailable: ['a'] });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, [member('a'), member('b')]).start).toEqual(['a', 'b']);
  });

  it('is finished when every node is done or skipped', () => {
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, [member('a', { phase: 'DONE' }), member('b', { phase: 'SKIPPED', ready: false })])).toMatchObject({ finished: true, unavailable: [] });
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, [member('a', { phase: 'DONE' }), member('b', { phase: 'UNCORDON' })]).finished).toBe(false);
  });
});

describe('allowedUnavailable', () => {
  it('takes a percentage of the rollout\'s nodes, rounded down but at least one', () => {
    expect(allowedUnavailable({ maxUnavailable: 25, isPercent: true }, 10)).toBe(2);
    expect(allowedUnavailable({ maxUnavailable: 10, isPercent: true }, 3)).toBe(1);
    expect(allowedUnavailable({ maxUnavailable: 0, isPercent: true }, 30)).toBe(0);
    expect(allowedUnavailable({ maxUnavailable: 3, isPercent: false }, 2)).toBe(3);
  });
});
