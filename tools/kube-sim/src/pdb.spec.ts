import { describe, expect, it } from 'vitest';
import type { KubeObject } from './kube-object';
import { computePdbStatus, scaledValue, type ControllerScale } from './pdb';

function pod(name: string, opts: { ready?: boolean; labels?: Record<string, string>; deleting?: boolean; owner?: string } = {}): KubeObject {
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: opts.labels ?? { app: 'web' },
      ...(opts.deleting ? { deletionTimestamp: '2030-01-01T00:00:00Z' } : {}),
      ...(opts.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: opts.owner, uid: opts.owner, controller: true }] } : {}),
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

function pdb(spec: Record<string, unknown>): KubeObject {
  return { metadata: { name: 'budget', namespace: 'ns', generation: 3 }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } as KubeObject['spec'] };
}

const scale =
  (replicas: number): ControllerScale =>
  (p) =>
    p.metadata.ownerReferences?.[0] ? { uid: p.metadata.ownerReferences[0].uid, replicas } : undefined;

const NOW = new Date('2026-12-01T00:00:00Z');

const fivePods = [pod('a', { owner: 'rs' }), pod('b', { owner: 'rs' }), pod('c', { owner: 'rs' }), pod('d', { owner: 'rs', ready: false }), pod('e', { owner: 'rs', deleting: true }), pod('other', { labels: { app: 'db' }, owner: 'rs2' })];

describe('PodDisruptionBudget status', () => {
  it.each([
    // spec, controller scale, expected [expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed]
    [{ minAvailable: 2 }, 5, [5, 2, 3, 1]],
    [{ minAvailable: 3 }, 5, [5, 3, 3, 0]],
    [{ minAvailable: 4 }, 5, [5, 4, 3, 0]],
    [{ minAvailable: '50%' }, 6, [6, 3, 3, 0]],
    [{ minAvailable: '30%' }, 6, [6, 2, 3, 1]],
    [{ maxUnavailable: 1 }, 5, [5, 4, 3, 0]],
    [{ maxUnavailable: 3 }, 5, [5, 2, 3, 1]],
    [{ maxUnavailable: '50%' }, 5, [5, 2, 3, 1]],
    [{ maxUnavailable: '100%' }, 4, [4, 0, 3, 3]],
  ])('%o with scale %i', (spec, replicas, [expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed]) => {
    const status = computePdbStatus(pdb(spec), fivePods, scale(replicas), NOW);
    expect(status).toMatchObject({ expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed, observedGeneration: 3 });
    expect((status['conditions'] as { reason: string }[])[0].reason).toBe(disruptionsAllowed > 0 ? 'SufficientPods' : 'InsufficientPods');
  });

  it('fails safe when a percentage needs a controller the pods do not have', () => {
    const status = computePdbStatus(pdb({ minAvailable: '50%' }), [pod('x')], scale(1), NOW);
    expect(status['disruptionsAllowed']).toBe(0);
    expect((status['conditions'] as { reason: string; message: string }[])[0]).toMatchObject({ reason: 'SyncFailed', message: 'found no controllers for pod "x"' });
  });

  it('allows nothing while no pods are expected, and counts recently evicted pods as unhealthy', () => {
    expect(computePdbStatus(pdb({ minAvailable: 0 }), [], scale(1), NOW)['disruptionsAllowed']).toBe(0);
    const withDisrupted = { ...pdb({ minAvailable: 1 }), status: { disruptedPods: { a: new Date(NOW.getTime() - 60_000).toISOString() } } };
    const status = computePdbStatus(withDisrupted, fivePods, scale(5), NOW);
    expect(status).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1, disruptedPods: { a: expect.any(String) } });
  });

  it('rounds percentages up', () => {
    expect(scaledValue('33%', 10)).toBe(4);
    expect(scaledValue(2, 10)).toBe(2);
  });
});
