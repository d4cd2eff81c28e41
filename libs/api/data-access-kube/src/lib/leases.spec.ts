import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { clientVia, CuttableProxy, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import type { KubeClient } from './kube-client';
import { claimedLease, LeaderElection, LeaseObservation, releasedLease, startLeaderElection, type LeaderElector } from './leases';

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
  let clock = new FakeClock(undefined, false);

  afterEach(async () => {
    clock = new FakeClock(undefined, false);
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
      clock,
      onStartedLeading: () => {
        history.push({ who, leading: true, at: clock.monotonic() });
      },
      onStoppedLeading: () => {
        history.push({ who, leading: false, at: clock.monotonic() });
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
    // A first request that misses its deadline on a busy machine is retried when time moves on.
    await clock.passTimeUntil(() => a.isLeader || b.isLeader, 2, 5000, 'a leader');
    const [leader, follower] = a.isLeader ? [a, b] : [b, a];
    await clock.passTime(2 * TIMING.leaseDurationSeconds * 1000, 2);
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
    await clock.passTimeUntil(() => a.isLeader, 1, 5000, 'a leading');
    const b = candidate(world.client, 'b', history);
    await clock.passTime(1000, 2);
    expect(b.isLeader).toBe(false);

    const cutAt = clock.monotonic();
    proxy.cutLink();
    await clock.passTimeUntil(() => b.isLeader, 2, 10_000, 'b leading');
    const takeover = history.find((t) => t.who === 'b' && t.leading)?.at ?? 0;
    const stepDown = history.find((t) => t.who === 'a' && !t.leading)?.at ?? Infinity;
    expect(stepDown).toBeLessThan(takeover);
    expect(stepDown - cutAt).toBeLessThanOrEqual((TIMING.renewDeadlineSeconds + TIMING.retryPeriodSeconds) * 1000);
    expect(takeover - cutAt).toBeLessThanOrEqual((TIMING.leaseDurationSeconds + 2 * TIMING.retryPeriodSeconds * 1.2) * 1000);
    // Nobody may take over before the lease, as last seen renewed, ran out on the taker's clock.
    expect(takeover - cutAt).toBeGreaterThanOrEqual((TIMING.leaseDurationSeconds - TIMING.retryPeriodSeconds * 1.2) * 1000);
    expect(a.isLeader).toBe(false);
    neverTwoLeaders(history);
    expect((await readLease(world.client)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });

    // The old leader comes back and finds the lease taken: it stays a follower.
    proxy.restore();
    await clock.passTime(1000, 2);
    expect(a.isLeader).toBe(false);
    expect(a.leader).toBe('b');
    neverTwoLeaders(history);
  });

  it('releases the lease on stop so the other candidate takes over at once', async () => {
    world = await startSimWithClient();
    const history: Transition[] = [];
    const a = candidate(world.client, 'a', history);
    await clock.passTimeUntil(() => a.isLeader, 1, 5000, 'a leading');
    const b = candidate(world.client, 'b', history);
    await clock.passTime(500, 2);
    const stoppedAt = clock.monotonic();
    await a.stop();
    await clock.passTimeUntil(() => b.isLeader, 1, 5000, 'b leading');
    expect(clock.monotonic() - stoppedAt).toBeLessThan(TIMING.leaseDurationSeconds * 1000);
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
      clock,
      onStartedLeading: (s) => {
        signal = s;
      },
    });
    electors.push(elector);
    await clock.passTimeUntil(() => signal !== undefined, 1, 5000, 'solo leading');
    expect(signal?.aborted).toBe(false);
    await elector.stop();
    expect(signal?.aborted).toBe(true);
    expect((await solo.client.call('read', (o) => solo.client.coordination.readNamespacedLease({ name: 'x', namespace: 'default' }, o))).spec?.holderIdentity).toBe('');
    expect(() => startLeaderElection(solo.client, { namespace: 'default', name: 'y', identity: 'z', leaseDurationSeconds: 5, renewDeadlineSeconds: 6, onStartedLeading: () => undefined })).toThrow(
      /leaseDurationSeconds > renewDeadlineSeconds/,
    );
  });

  it('moves through its phases: competing, leading, competing again after missing the renew deadline, stopped', async () => {
    world = await startSimWithClient();
    proxy = await CuttableProxy.start(world.sim);
    const cutOff = clientVia(world.sim, proxy.url, 1000);
    clients.push(cutOff);
    const election = new LeaderElection(cutOff, { namespace: 'default', name: 'phases', identity: 'p', ...TIMING, clock, onStartedLeading: () => undefined });
    electors.push(election);
    expect(election.phase).toBe('competing');
    election.start();
    await clock.passTimeUntil(() => election.isLeader, 1, 5000, 'p leading');
    expect(election.phase).toBe('leading');
    proxy.cutLink();
    const cutAt = clock.monotonic();
    await clock.passTimeUntil(() => election.phase === 'competing', 1, 5000, 'p stepping down');
    expect(clock.monotonic() - cutAt).toBeLessThanOrEqual((TIMING.renewDeadlineSeconds + TIMING.retryPeriodSeconds) * 1000);
    proxy.restore();
    // The lease still names it: its next attempt renews it.
    await clock.passTimeUntil(() => election.isLeader, 1, 5000, 'p leading again');
    await election.stop();
    expect(election.phase).toBe('stopped');
  });
});

describe('lease records', () => {
  const stamp = new V1MicroTime('2026-12-01T10:00:00.000Z');
  const held = (holder: string, renewTime = '2026-12-01T09:59:00.000000Z'): V1Lease => ({
    metadata: { name: 'l', resourceVersion: '7' },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: renewTime as unknown as V1MicroTime, acquireTime: '2026-12-01T09:00:00.000000Z' as unknown as V1MicroTime, leaseTransitions: 3 },
  });

  it('acquiring from another holder counts a transition and restarts acquireTime; renewing keeps both', () => {
    expect(claimedLease(held('other'), 'me', 15, stamp, false).spec).toMatchObject({ holderIdentity: 'me', leaseTransitions: 4, acquireTime: stamp, renewTime: stamp });
    expect(claimedLease(held('me'), 'me', 15, stamp, true).spec).toMatchObject({ holderIdentity: 'me', leaseTransitions: 3, acquireTime: '2026-12-01T09:00:00.000000Z', renewTime: stamp });
    // The read resourceVersion goes back with the write: that makes it a compare-and-swap.
    expect(claimedLease(held('other'), 'me', 15, stamp, false).metadata?.resourceVersion).toBe('7');
  });

  it('a released lease has no holder and a one-second duration', () => {
    expect(releasedLease(held('me'), stamp).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 });
  });

  it('counts another holder’s lease as expired only after it looked the same for its whole duration on our clock', () => {
    const observation = new LeaseObservation();
    expect(observation.observe(held('other'), 1_000)).toBe('other');
    expect(observation.heldByOther('me', 15_999)).toBe(true);
    expect(observation.heldByOther('me', 16_000)).toBe(false);
    // A renewal (new renewTime) seen later starts the count again, whatever the timestamp says.
    expect(observation.observe(held('other', '2026-12-01T09:59:02.000000Z'), 10_000)).toBeNull();
    expect(observation.heldByOther('me', 16_000)).toBe(true);
    expect(observation.heldByOther('me', 25_000)).toBe(false);
    expect(observation.heldByOther('other', 10_000)).toBe(false);
    expect(observation.heldBy('other')).toBe(true);
  });

  it('reports a new leader once, and nobody for a free lease', () => {
    const observation = new LeaseObservation();
    expect(observation.observe(held(''), 0)).toBeNull();
    expect(observation.leader).toBeNull();
    expect(observation.heldByOther('me', 0)).toBe(false);
    expect(observation.observe(held('a'), 1)).toBe('a');
    expect(observation.observe(held('a', '2026-12-01T09:59:05.000000Z'), 2)).toBeNull();
    expect(observation.observe(held('b'), 3)).toBe('b');
    expect(observation.leader).toBe('b');
  });
});
