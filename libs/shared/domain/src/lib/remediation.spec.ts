import { describe, expect, it } from 'vitest';
import { DEFAULT_REMEDIATION_POLICY, type NodeRemediation, type RemediationMember, type RemediationPolicy, planRemediation, remediationCap } from './remediation';

const now = new Date('2026-12-05T04:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
const policy: RemediationPolicy = { ...DEFAULT_REMEDIATION_POLICY, enabled: true, unhealthySeconds: 30, rungTimeoutSeconds: 60, maxUnhealthy: 1 };
const healthy = (id: string, remediation: NodeRemediation | null = null): RemediationMember => ({ id, health: { state: 'HEALTHY', since: ago(600) }, remediation });
const unhealthy = (id: string, forSeconds: number, remediation: NodeRemediation | null = null): RemediationMember => ({ id, health: { state: 'UNHEALTHY', since: ago(forSeconds) }, remediation });
const at = (rung: NodeRemediation['rung'], deadlineIn: number, exhausted = false): NodeRemediation => ({
  rung,
  startedAt: ago(10).toISOString(),
  deadline: new Date(now.getTime() + deadlineIn * 1000).toISOString(),
  rungs: rung === 'REBOOT' ? ['RESTART_KUBELET', 'REBOOT'] : ['RESTART_KUBELET'],
  exhausted,
});

describe('remediation', () => {
  it('starts the first rung on a member unhealthy for the policy\'s time, and not before', () => {
    expect(planRemediation(policy, [healthy('a'), unhealthy('b', 31), healthy('c')], now)).toEqual({ held: null, steps: [{ kind: 'START', nodeId: 'b', rung: 'RESTART_KUBELET' }] });
    expect(planRemediation(policy, [healthy('a'), unhealthy('b', 29), healthy('c')], now).steps).toEqual([]);
  });

  it('moves to the next rung once a rung\'s deadline passed with the member still unhealthy, then gives up', () => {
    expect(planRemediation(policy, [unhealthy('b', 200, at('RESTART_KUBELET', 5)), healthy('a')], now).steps).toEqual([]);
    expect(planRemediation(policy, [unhealthy('b', 200, at('RESTART_KUBELET', -1)), healthy('a')], now).steps).toEqual([{ kind: 'ESCALATE', nodeId: 'b', rung: 'REBOOT' }]);
    expect(planRemediation(policy, [unhealthy('b', 400, at('REBOOT', -1)), healthy('a')], now).steps).toEqual([{ kind: 'EXHAUSTED', nodeId: 'b' }]);
    expect(planRemediation(policy, [unhealthy('b', 500, at('REBOOT', -100, true)), healthy('a')], now).steps).toEqual([]);
  });

  it('replaces a member of a node group with a spare once a reboot did not bring it back; without a spare it gives up', () => {
    const replaceable = { ...unhealthy('b', 400, at('REBOOT', -1)), replaceable: true };
    expect(planRemediation(policy, [replaceable, healthy('a')], now).steps).toEqual([{ kind: 'ESCALATE', nodeId: 'b', rung: 'REPLACE' }]);
    expect(planRemediation(policy, [{ ...replaceable, replaceable: false }, healthy('a')], now).steps).toEqual([{ kind: 'EXHAUSTED', nodeId: 'b' }]);
    // A spare never skips the rungs before it.
    expect(planRemediation(policy, [{ ...unhealthy('b', 200, at('RESTART_KUBELET', -1)), replaceable: true }, healthy('a')], now).steps).toEqual([{ kind: 'ESCALATE', nodeId: 'b', rung: 'REBOOT' }]);
  });

  it('records a member healthy again as recovered, even while held or paused', () => {
    expect(planRemediation(policy, [healthy('b', at('RESTART_KUBELET', 30)), healthy('a')], now).steps).toEqual([{ kind: 'RECOVERED', nodeId: 'b' }]);
    expect(planRemediation({ ...policy, paused: true }, [healthy('b', at('RESTART_KUBELET', 30))], now).steps).toEqual([{ kind: 'RECOVERED', nodeId: 'b' }]);
  });

  it('holds everything when more members are unhealthy than the cap, members under remediation counted', () => {
    const members = [unhealthy('a', 100), unhealthy('b', 100), healthy('c')];
    expect(planRemediation(policy, members, now)).toEqual({ held: { unhealthy: 2, members: 3, cap: 1 }, steps: [] });
    const oneUnderRemediation = [unhealthy('a', 100), unhealthy('b', 100, at('RESTART_KUBELET', -1)), healthy('c')];
    expect(planRemediation(policy, oneUnderRemediation, now).held).toEqual({ unhealthy: 2, members: 3, cap: 1 });
    // One fault lifted: the other is remediated.
    expect(planRemediation(policy, [healthy('a'), unhealthy('b', 100), healthy('c')], now).steps).toEqual([{ kind: 'START', nodeId: 'b', rung: 'RESTART_KUBELET' }]);
  });

  it('leaves alone a member a rollout has out of service on purpose: no rung starts or escalates, and it does not count towards the cap', () => {
    const rebooting = { ...unhealthy('b', 400), inMaintenance: true };
    expect(planRemediation(policy, [rebooting, healthy('a')], now)).toEqual({ held: null, steps: [] });
    expect(planRemediation(policy, [{ ...unhealthy('b', 400, at('RESTART_KUBELET', -1)), inMaintenance: true }, healthy('a')], now).steps).toEqual([]);
    // Beside it, a member that really failed is remediated: the rollout's node does not fill the cap.
    expect(planRemediation(policy, [rebooting, unhealthy('c', 100), healthy('a')], now)).toEqual({ held: null, steps: [{ kind: 'START', nodeId: 'c', rung: 'RESTART_KUBELET' }] });
    // Back and Ready, an earlier remediation is recorded as recovered.
    expect(planRemediation(policy, [{ ...healthy('b', at('RESTART_KUBELET', 30)), inMaintenance: true }], now).steps).toEqual([{ kind: 'RECOVERED', nodeId: 'b' }]);
  });

  it('does nothing new while off or paused', () => {
    const members = [unhealthy('b', 100), healthy('a')];
    expect(planRemediation({ ...policy, enabled: false }, members, now)).toEqual({ held: null, steps: [] });
    expect(planRemediation({ ...policy, paused: true }, members, now)).toEqual({ held: null, steps: [] });
  });

  it('caps by a count or a percentage of the members, rounding down', () => {
    expect(remediationCap({ ...policy, maxUnhealthy: 2 }, 10)).toBe(2);
    expect(remediationCap({ ...policy, maxUnhealthy: 40, maxUnhealthyIsPercent: true }, 10)).toBe(4);
    expect(remediationCap({ ...policy, maxUnhealthy: 40, maxUnhealthyIsPercent: true }, 3)).toBe(1);
  });
});
