import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REMOVAL_OPTIONS,
  type RemovalNodeFacts,
  type RemovalOptions,
  type RemovalPhase,
  checkRemovalOptions,
  inventoryRole,
  nextRemovalPhase,
  removalSafety,
} from './node-removal';

const worker = (name: string, extra: Partial<RemovalNodeFacts> = {}): RemovalNodeFacts => ({
  name,
  roles: ['worker'],
  controlPlaneTaints: [],
  ready: true,
  readyStatus: 'True',
  unschedulable: false,
  ...extra,
});
const options = (extra: Partial<RemovalOptions> = {}): RemovalOptions => ({ ...DEFAULT_REMOVAL_OPTIONS, ...extra });
const failed = (verdict: ReturnType<typeof removalSafety>) => verdict.checks.filter((check) => !check.passed).map((check) => check.rule);

describe('removal safety', () => {
  it('allows a worker while another schedulable Ready worker remains', () => {
    const verdict = removalSafety(worker('w1'), [worker('w1'), worker('w2'), worker('m1', { roles: ['master'] })], options());
    expect(verdict).toMatchObject({ allowed: true, refusal: null });
    expect(failed(verdict)).toEqual([]);
  });

  it.each([
    ['a master role label', worker('m1', { roles: ['master'] })],
    ['a control-plane role label', worker('cp1', { roles: ['control-plane', 'worker'] })],
    ['a control-plane taint only', worker('cp2', { roles: [], controlPlaneTaints: [{ key: 'node-role.kubernetes.io/control-plane' }] })],
  ])('refuses a control-plane node (%s), whatever the options', (_label, node) => {
    const verdict = removalSafety(node, [worker('w2')], options({ allowLastWorker: true, force: true }));
    expect(verdict.allowed).toBe(false);
    expect(failed(verdict)).toEqual(['CONTROL_PLANE']);
    expect(verdict.refusal).toContain('control-plane node');
  });

  it('needs allowLastWorker for the last schedulable Ready worker; cordoned, NotReady and control-plane nodes do not count', () => {
    const others = [worker('w2', { unschedulable: true }), worker('w3', { ready: false, readyStatus: 'Unknown' }), worker('m1', { roles: ['master'] })];
    const refused = removalSafety(worker('w1'), others, options());
    expect(refused.allowed).toBe(false);
    expect(failed(refused)).toEqual(['LAST_WORKER']);
    expect(refused.refusal).toContain('allowLastWorker');
    expect(removalSafety(worker('w1'), others, options({ allowLastWorker: true })).allowed).toBe(true);
  });

  it('refuses an ungraceful removal of a Ready node and one without the typed name', () => {
    expect(failed(removalSafety(worker('w1'), [worker('w2')], options({ ungraceful: true, confirmHostname: 'w1' })))).toEqual(['UNGRACEFUL_NEEDS_DEAD_NODE']);
    const dead = worker('w1', { ready: false, readyStatus: 'Unknown' });
    expect(failed(removalSafety(dead, [worker('w2')], options({ ungraceful: true })))).toEqual(['CONFIRM_HOSTNAME']);
    expect(failed(removalSafety(dead, [worker('w2')], options({ ungraceful: true, confirmHostname: 'w2' })))).toEqual(['CONFIRM_HOSTNAME']);
    expect(removalSafety(dead, [worker('w2')], options({ ungraceful: true, confirmHostname: 'w1' })).allowed).toBe(true);
  });

  it('warns, without refusing, when a NotReady node is drained gracefully', () => {
    const verdict = removalSafety(worker('w1', { ready: false, readyStatus: 'False' }), [worker('w2')], options());
    expect(verdict.allowed).toBe(true);
    expect(verdict.checks.find((check) => check.rule === 'NODE_NOT_READY')).toMatchObject({ passed: false, blocking: false });
  });

  it('checks a typed name for a graceful removal too, when one is given', () => {
    expect(failed(removalSafety(worker('w1'), [worker('w2')], options({ confirmHostname: 'w9' })))).toEqual(['CONFIRM_HOSTNAME']);
  });
});

describe('removal options and phases', () => {
  it.each([
    [{ gracePeriodSeconds: -2 }, 'gracePeriodSeconds'],
    [{ gracePeriodSeconds: 1.5 }, 'gracePeriodSeconds'],
    [{ timeoutSeconds: -1 }, 'timeoutSeconds'],
    [{ timeoutSeconds: 86_401 }, 'timeoutSeconds'],
  ])('refuses %o', (extra, field) => {
    expect(checkRemovalOptions(options(extra))?.field).toBe(field);
  });

  it('accepts kubectl’s defaults', () => {
    expect(checkRemovalOptions(DEFAULT_REMOVAL_OPTIONS)).toBeNull();
  });

  it('goes drain → stop kubelet → delete Node → deny CSRs → revoke tokens → (clean host) → done', () => {
    const walk = (cleanHost: boolean) => {
      const phases: RemovalPhase[] = ['DRAIN'];
      while (phases[phases.length - 1] !== 'DONE') {
        phases.push(nextRemovalPhase(phases[phases.length - 1], cleanHost));
      }
      return phases;
    };
    expect(walk(false)).toEqual(['DRAIN', 'STOP_KUBELET', 'DELETE_NODE', 'DENY_CSRS', 'REVOKE_TOKENS', 'DONE']);
    expect(walk(true)).toEqual(['DRAIN', 'STOP_KUBELET', 'DELETE_NODE', 'DENY_CSRS', 'REVOKE_TOKENS', 'CLEAN_HOST', 'DONE']);
  });

  it.each([
    [['worker'], [], 'worker'],
    [['master', 'worker'], [], 'master'],
    [['control-plane', 'master'], [], 'control-plane'],
    [[], [{ key: 'node-role.kubernetes.io/master' }], 'control-plane'],
    [['infra'], [], 'infra'],
    [[], [], 'worker'],
  ])('role of %o with taints %o is %s', (roles, controlPlaneTaints, role) => {
    expect(inventoryRole(worker('n', { roles, controlPlaneTaints }))).toBe(role);
  });
});
