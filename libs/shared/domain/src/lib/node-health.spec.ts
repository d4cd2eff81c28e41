import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { type HealthInputs, nodeHealth } from './node-health';

const since = new Date('2026-12-05T03:00:00Z');
const member = (extra: Partial<HealthInputs> = {}): HealthInputs => ({ status: 'JOINED', readyStatus: 'True', readySince: since, hostHealth: null, ...extra });
const checked = (extra: { reachable: boolean; kubeletActive: boolean | null }) => ({ checkedAt: '2026-12-05T03:04:00.000Z', reason: message('health.kubeletState', { state: 'inactive' }), ...extra });

describe('a node\'s health', () => {
  it('is healthy while Ready and the host, when checked, answers with its kubelet active; since Ready became True', () => {
    expect(nodeHealth(member())).toEqual({ state: 'HEALTHY', since, problems: [] });
    expect(nodeHealth(member({ hostHealth: checked({ reachable: true, kubeletActive: true }) }))?.state).toBe('HEALTHY');
  });

  it('is unhealthy when the Node is not Ready or its kubelet stopped reporting, since the condition changed', () => {
    expect(nodeHealth(member({ readyStatus: 'False' }))).toMatchObject({ state: 'UNHEALTHY', since, problems: [{ kind: 'NOT_READY', since }] });
    expect(nodeHealth(member({ readyStatus: 'Unknown' }))?.problems.map((problem) => problem.text.code)).toEqual(['health.readyUnknown']);
  });

  it('is unhealthy when the host does not answer or its kubelet unit is not active, though the Node still says Ready', () => {
    const unreachable = nodeHealth(member({ hostHealth: checked({ reachable: false, kubeletActive: null }) }));
    expect(unreachable).toMatchObject({ state: 'UNHEALTHY', since: new Date('2026-12-05T03:04:00.000Z'), problems: [{ kind: 'HOST_UNREACHABLE' }] });
    const inactive = nodeHealth(member({ hostHealth: checked({ reachable: true, kubeletActive: false }) }));
    expect(inactive?.problems.map((problem) => problem.kind)).toEqual(['KUBELET_INACTIVE']);
    expect(inactive?.problems[0]?.text.message).toBe('the kubelet unit is not active on the host: systemctl is-active kubelet says inactive');
  });

  it('names every problem at once, since the earliest', () => {
    const health = nodeHealth(member({ readyStatus: 'Unknown', hostHealth: checked({ reachable: false, kubeletActive: null }) }));
    expect(health?.problems.map((problem) => problem.kind)).toEqual(['READY_UNKNOWN', 'HOST_UNREACHABLE']);
    expect(health?.since).toEqual(since);
  });

  it('is unknown for a member the cluster has not shown yet, and not judged for a node that is not a member', () => {
    expect(nodeHealth(member({ readyStatus: null, readySince: null }))).toEqual({ state: 'UNKNOWN', since: null, problems: [] });
    for (const status of ['ADDING', 'INSTALLING', 'STALLED', 'REMOVED'] as const) {
      expect(nodeHealth(member({ status, readyStatus: 'False' }))).toBeNull();
    }
    expect(nodeHealth(member({ status: 'DRAIN_FAILED', readyStatus: 'False' }))?.state).toBe('UNHEALTHY');
  });
});
