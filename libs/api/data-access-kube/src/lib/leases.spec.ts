import { afterEach, describe, expect, it } from 'vitest';
import { clientVia, CuttableProxy, eventually, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import type { KubeClient } from './kube-client';
import { startLeaderElection, type LeaderElector } from './leases';

/** Short timings so fail-over happens within a test: lease 2 s, renew deadline 1.5 s, retry 0.25 s. */
const TIMING = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };

interface Transition {
  who: string;
  leading: boolean;
  at: number;
}

/** At no point in the recorded history were two candidates leading. */
function neverTwoLeaders(history: readonly Transition[]): void {
  const leaders = new Set<string>();
  for (const step of history) {
    if (step.leading) {
      expect([...leaders], `${step.who} started leading while others led`).toEqual([]);
      leaders.add(step.who);
    } else {
      leaders.delete(step.who);
    }
  }
}

describe('leader election', () => {
  let world: SimWithClient | undefined;
  let proxy: CuttableProxy | undefined;
  const electors: LeaderElector[] = [];
  const clients: KubeClient[] = [];

  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
    clients.splice(0).forEach((c) => c.close());
    await proxy?.stop();
    await world?.stop();
    proxy = undefined;
    world = undefined;
  });

  const candidate = (client: KubeClient, who: string, history: Transition[], extra: { releaseOnStop?: boolean } = {}): LeaderElector => {
    const elector = startLeaderElection(client, {
      namespace: 'kube-system',
      name: 'ccos-scaler-controllers',
      identity: who,
      ...TIMING,
      ...extra,
      onStartedLeading: () => {
        history.push({ who, leading: true, at: performance.now() });
      },
      onStoppedLeading: () => {
        history.push({ who, leading: false, at: performance.now() });
      },
    });
    electors.push(elector);
    return elector;
  };
  const readLease = (client: KubeClient) => client.call('read lease', (o) => client.coordination.readNamespacedLease({ name: 'ccos-scaler-controllers', namespace: 'kube-system' }, o));

  it('elects exactly one of two candidates and keeps it while it renews', async () => {
    world = await startSimWithClient();
    const history: Transition[] = [];
    const a = candidate(world.client, 'a', history);
    const b = candidate(world.client, 'b', history);
    await eventually(() => (a.isLeader || b.isLeader ? true : undefined));
    const [leader, follower] = a.isLeader ? [a, b] : [b, a];
    await new Promise((resolve) => setTimeout(resolve, 2 * TIMING.leaseDurationSeconds * 1000));
    expect(leader.isLeader).toBe(true);
    expect(follower.isLeader).toBe(false);
    expect(follower.leader).toBe(leader === a ? 'a' : 'b');
    expect(history).toHaveLength(1);
    const lease = await readLease(world.client);
    expect(lease.spec).toMatchObject({ holderIdentity: leader === a ? 'a' : 'b', leaseDurationSeconds: 2, leaseTransitions: 0 });
  });

  it('fails over when the leader stops renewing (link cut): the old leader steps down first, the other takes over within leaseDuration + retry', async () => {
    world = await startSimWithClient();
    proxy = await CuttableProxy.start(world.sim);
    const cutOff = clientVia(world.sim, proxy.url, 1000);
    clients.push(cutOff);
    const history: Transition[] = [];
    const a = candidate(cutOff, 'a', history);
    await eventually(() => (a.isLeader ? true : undefined));
    const b = candidate(world.client, 'b', history);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(b.isLeader).toBe(false);

    const cutAt = performance.now();
    proxy.cutLink();
    await eventually(() => (b.isLeader ? true : undefined), 10_000, 'b leading');
    const takeover = history.find((t) => t.who === 'b' && t.leading)?.at ?? 0;
    const stepDown = history.find((t) => t.who === 'a' && !t.leading)?.at ?? Infinity;
    expect(stepDown).toBeLessThan(takeover);
    expect(stepDown - cutAt).toBeLessThanOrEqual((TIMING.renewDeadlineSeconds + TIMING.retryPeriodSeconds) * 1000 + 600);
    expect(takeover - cutAt).toBeLessThanOrEqual((TIMING.leaseDurationSeconds + 2 * TIMING.retryPeriodSeconds * 1.2) * 1000 + 600);
    expect(a.isLeader).toBe(false);
    neverTwoLeaders(history);
    expect((await readLease(world.client)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });

    // The old leader comes back and finds the lease taken: it stays a follower.
    proxy.restore();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(a.isLeader).toBe(false);
    expect(a.leader).toBe('b');
    neverTwoLeaders(history);
  });

  it('releases the lease on stop so the other candidate takes over at once', async () => {
    world = await startSimWithClient();
    const history: Transition[] = [];
    const a = candidate(world.client, 'a', history);
    await eventually(() => (a.isLeader ? true : undefined));
    const b = candidate(world.client, 'b', history);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stoppedAt = performance.now();
    await a.stop();
    await eventually(() => (b.isLeader ? true : undefined), 5000, 'b leading');
    expect(performance.now() - stoppedAt).toBeLessThan(TIMING.leaseDurationSeconds * 1000);
    expect(history.map((t) => `${t.who} ${t.leading ? 'start' : 'stop'}`)).toEqual(['a start', 'a stop', 'b start']);
    neverTwoLeaders(history);
  });

  it('aborts the leader’s signal when leadership ends, and checks its timings', async () => {
    const solo = await startSimWithClient();
    world = solo;
    let signal: AbortSignal | undefined;
    const elector = startLeaderElection(solo.client, {
      namespace: 'default',
      name: 'x',
      identity: 'solo',
      ...TIMING,
      onStartedLeading: (s) => {
        signal = s;
      },
    });
    electors.push(elector);
    await eventually(() => signal);
    expect(signal?.aborted).toBe(false);
    await elector.stop();
    expect(signal?.aborted).toBe(true);
    expect((await solo.client.call('read', (o) => solo.client.coordination.readNamespacedLease({ name: 'x', namespace: 'default' }, o))).spec?.holderIdentity).toBe('');
    expect(() => startLeaderElection(solo.client, { namespace: 'default', name: 'y', identity: 'z', leaseDurationSeconds: 5, renewDeadlineSeconds: 6, onStartedLeading: () => undefined })).toThrow(
      /leaseDurationSeconds > renewDeadlineSeconds/,
    );
  });
});
