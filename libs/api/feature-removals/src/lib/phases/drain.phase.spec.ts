import { describe, expect, it } from 'vitest';
import type { DrainEvent, DrainResult, KubeClient } from '@ccos/api/data-access-kube';
import { bare, formatMessage, message } from '@ccos/shared/messages';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { kindsAndCodes, type PhaseHarness, phaseHarness, runningRun } from '../../testing/phase-harness';
import { DrainPhase, type Drains } from './drain.phase';

const CLIENT = {} as KubeClient;

const blocked = (pod: string, detail = 'The disruption budget db-budget needs 1 healthy pods and has 1 currently'): DrainEvent => ({
  type: 'pod-blocked',
  pod,
  pdb: 'db-budget',
  message: "Cannot evict pod as it would violate the pod's disruption budget.",
  detail,
  coded: bare(message('drain.violatesBudget')),
  retryInMs: 5000,
});

interface Drained {
  readonly h: PhaseHarness;
  readonly result: Awaited<ReturnType<DrainPhase['run']>>;
  /** The options each drain was called with, and which drain. */
  readonly calls: Array<{ drain: 'graceful' | 'ungraceful'; node: string; options: Record<string, unknown> }>;
  readonly refusals: string[];
  readonly clock: FakeClock;
}

/**
 * The phase with drains that send `events` (each after `stepMs` of virtual time) and end with
 * `result`; `during` runs after the events, before the drain returns.
 */
async function drainWith(
  events: DrainEvent[],
  result: DrainResult,
  setup: { run?: Parameters<typeof runningRun>[0]; during?: (h: PhaseHarness) => void; stepMs?: number; unreachable?: boolean } = {},
): Promise<Drained> {
  const clock = new FakeClock();
  const run = runningRun({ startedAt: new Date(clock.now() - 20_000), ...setup.run });
  const h = phaseHarness(run);
  const calls: Drained['calls'] = [];
  const refusals: string[] = [];
  const fake =
    (drain: 'graceful' | 'ungraceful') =>
    async (client: KubeClient, node: string, options: object = {}, onEvent: (event: DrainEvent) => void = () => undefined): Promise<DrainResult> => {
      expect(client).toBe(CLIENT);
      calls.push({ drain, node, options: { ...options } });
      for (const event of events) {
        await clock.sleep(setup.stepMs ?? 0);
        onEvent(event);
      }
      setup.during?.(h);
      return result;
    };
  const drains: Drains = { graceful: fake('graceful'), ungraceful: fake('ungraceful') };
  const phase = new DrainPhase({
    clusters: { watch: async () => (setup.unreachable ? Promise.reject(new Error('connect ECONNREFUSED 198.18.0.2:6443')) : { client: CLIENT, nodes: () => [], podsOnNode: () => null }) },
    drains,
    clock,
    evictionRetryMs: 5000,
    observer: { evictionRefused: (clusterId) => refusals.push(clusterId) },
  });
  return { h, result: await phase.run(h.ctx), calls, refusals, clock };
}

const DONE: DrainResult = { ok: true, evicted: ['shop/web-1'], skipped: [{ pod: 'kube-system/agent-w1', reason: 'ignoring DaemonSet-managed Pods', reasonCoded: bare(message('drain.daemonSetWarning')) }] };

describe('DRAIN', () => {
  it('drains like kubectl with the run’s options, the time left of its timeout and the injected clock, recording each pod', async () => {
    const { h, result, calls } = await drainWith(
      [
        { type: 'cordoned', node: 'w1', alreadyCordoned: false },
        { type: 'pod-skipped', pod: 'kube-system/agent-w1', reason: 'ignoring DaemonSet-managed Pods', reasonCoded: bare(message('drain.daemonSetWarning')) },
        { type: 'pod-evicting', pod: 'shop/web-1', attempt: 1 },
        { type: 'pod-evicted', pod: 'shop/web-1' },
        { type: 'pod-deleted', pod: 'shop/web-1' },
        { type: 'done', result: DONE },
      ],
      DONE,
      { run: { options: { timeoutSeconds: 60, force: true, ignoreDaemonSets: true, gracePeriodSeconds: 30 } } },
    );
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(calls).toMatchObject([{ drain: 'graceful', node: 'w1', options: { force: true, deleteEmptyDirData: false, ignoreDaemonSets: true, gracePeriodSeconds: 30, timeoutSeconds: 40, retryIntervalMs: 5000 } }]);
    expect(calls[0].options['clock']).toBeInstanceOf(FakeClock);
    expect(kindsAndCodes(h.events)).toEqual([
      ['CORDONED', 'removal.event.cordoned'],
      ['POD_SKIPPED', 'drain.daemonSetWarning'],
      ['POD_EVICTED', 'removal.event.podEvicted'],
      ['POD_DELETED', 'removal.event.podGone'],
      ['DRAIN_FINISHED', 'removal.event.drained'],
    ]);
    expect(h.events[1]).toMatchObject({ pod: 'kube-system/agent-w1', message: { message: 'ignoring DaemonSet-managed Pods' } });
    expect(h.events.at(-1)).toMatchObject({ message: { params: { count: 1, ungraceful: false, skipped: 1 } }, detail: { evicted: 1, skipped: 1 } });
  });

  it.each([
    ['no timeout', 0, 0],
    ['a timeout that passed while no replica executed the run', 10, 1],
  ])('gives the drain %s', async (_case, timeoutSeconds, expected) => {
    const { calls } = await drainWith([], DONE, { run: { options: { timeoutSeconds } } });
    expect(calls[0].options['timeoutSeconds']).toBe(expected);
  });

  it('records a PodDisruptionBudget’s block once per reason, and says since when budgets hold the drain', async () => {
    const { h, refusals, clock } = await drainWith(
      [
        { type: 'cordoned', node: 'w1', alreadyCordoned: true },
        blocked('shop/db-1'),
        blocked('shop/db-1'),
        blocked('shop/db-1', 'The disruption budget db-budget needs 2 healthy pods and has 1 currently'),
        { type: 'pod-evicted', pod: 'shop/db-1' },
        blocked('shop/db-2'),
        { type: 'pod-evicted', pod: 'shop/db-2' },
      ],
      DONE,
      { stepMs: 5000 },
    );
    expect(kindsAndCodes(h.events)).toEqual([
      ['CORDONED', 'removal.event.alreadyCordoned'],
      ['POD_BLOCKED', 'drain.violatesBudget'],
      ['POD_BLOCKED', 'drain.violatesBudget'],
      ['POD_EVICTED', 'removal.event.podEvicted'],
      ['POD_BLOCKED', 'drain.violatesBudget'],
      ['POD_EVICTED', 'removal.event.podEvicted'],
      ['DRAIN_FINISHED', 'removal.event.drained'],
    ]);
    expect(h.events[1]).toMatchObject({
      pod: 'shop/db-1',
      pdb: 'db-budget',
      message: { message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget db-budget needs 1 healthy pods and has 1 currently" },
      detail: { retryInMs: 5000, cause: 'The disruption budget db-budget needs 1 healthy pods and has 1 currently' },
    });
    expect(refusals).toEqual([h.ctx.run.clusterId, h.ctx.run.clusterId, h.ctx.run.clusterId, h.ctx.run.clusterId]);
    const start = clock.now() - 7 * 5000;
    // Held since the first refusal after an eviction, not the latest; free again once a pod is evicted and when the drain ends.
    expect(h.held).toEqual([start + 10_000, start + 10_000, start + 10_000, null, start + 30_000, null, null]);
  });

  it('goes on when the Node is already gone: there is nothing to delete', async () => {
    const { h, result } = await drainWith([], { ok: false, failure: 'NODE_NOT_FOUND', reason: 'nodes "w1" not found', reasonCoded: bare(message('drain.raw', { text: 'nodes "w1" not found' })), blocking: [] });
    expect(result).toEqual({ outcome: 'NEXT', nodeGone: true });
    expect(h.events).toMatchObject([{ kind: 'DRAIN_FINISHED', message: { code: 'removal.event.nodeGone', params: { node: 'w1' } } }]);
  });

  it('ends the run at a drain that timed out, naming the pods and budgets that held it', async () => {
    const blocking = Array.from({ length: 12 }, (_, i) => ({ pod: `shop/db-${i}`, pdb: 'db-budget', message: 'Cannot evict pod', messageCoded: bare(message('drain.violatesBudget')) }));
    const reason = message('drain.stillOnNode', { reason: bare(message('drain.timedOut', { seconds: '40' })), pods: blocking.map((b) => b.pod).join(', ') });
    const { h, result } = await drainWith([], { ok: false, failure: 'TIMEOUT', reason: reason.message, reasonCoded: bare(reason), blocking }, { run: { options: { timeoutSeconds: 60 } } });
    expect(kindsAndCodes(h.events)).toEqual([['DRAIN_FAILED', 'removal.blocking']]);
    expect(h.events[0].detail).toEqual({ failure: 'TIMEOUT', blocking });
    const said = h.events[0].message;
    expect(typeof said !== 'string' && said.message).toMatch(
      /^the drain did not finish \(TIMEOUT\): the drain did not finish within 40 s; still on the node: shop\/db-0, .*\. Blocking: shop\/db-0 \(PodDisruptionBudget shop\/db-budget: Cannot evict pod as it would violate the pod's disruption budget\.\); .*; shop\/db-9 \([^)]*\), and 2 more$/,
    );
    expect(result).toMatchObject({ outcome: 'FAILED', reason: { code: 'removal.stopped' }, blocking });
    expect(result.outcome === 'FAILED' && typeof result.reason !== 'string' && formatMessage('en', result.reason.code, result.reason.params)).toBe(
      typeof said !== 'string' && formatMessage('en', 'removal.stopped', { what: bare(said) }),
    );
  });

  it('ends the run CANCELLED with the canceller’s words when an operator cancels during the drain', async () => {
    const cancelledBy = message('removal.cancelledBy', { actor: 'alice' });
    const { h, result } = await drainWith([blocked('shop/db-1')], { ok: false, failure: 'CANCELLED', reason: 'cancelled', reasonCoded: bare(message('removal.drainCancelled')), blocking: [{ pod: 'shop/db-1', pdb: 'db-budget', message: 'blocked' }] }, {
      during: (harness) => {
        harness.ctx.run.reason = cancelledBy.message;
        harness.ctx.run.reasonCoded = bare(cancelledBy);
        harness.cancel();
      },
    });
    expect(kindsAndCodes(h.events)).toEqual([
      ['POD_BLOCKED', 'drain.violatesBudget'],
      ['DRAIN_FAILED', 'removal.blocking'],
    ]);
    expect(h.events[1]).toMatchObject({ message: { params: { what: { code: 'removal.cancelledBy', params: { actor: 'alice' } } } }, detail: { failure: 'CANCELLED' } });
    expect(result).toMatchObject({ outcome: 'CANCELLED', blocking: [{ pod: 'shop/db-1' }] });
  });

  it('stops a run resumed with a cancel requested before it cordons again', async () => {
    const { h, result, calls } = await drainWith([], DONE, { run: { cancelRequested: true, reason: 'cancelled by alice', reasonCoded: bare(message('removal.cancelledBy', { actor: 'alice' })) } });
    expect(calls).toEqual([]);
    expect(h.events).toMatchObject([{ kind: 'DRAIN_FAILED', message: { code: 'removal.cancelledBy' }, detail: { failure: 'CANCELLED', blocking: [] } }]);
    expect(result).toMatchObject({ outcome: 'CANCELLED', blocking: [] });
  });

  it('ends the run when the cluster cannot be reached, touching nothing', async () => {
    const { h, result, calls } = await drainWith([], DONE, { unreachable: true });
    expect(calls).toEqual([]);
    expect(h.events).toMatchObject([{ kind: 'DRAIN_FAILED', message: { code: 'removal.drainNotFinished', params: { failure: 'API_ERROR', reason: { code: 'removal.clusterUnreachable' } } } }]);
    expect(result).toMatchObject({ outcome: 'FAILED', reason: { code: 'removal.stopped' } });
  });

  it('records nothing more once this replica stops executing the run', async () => {
    const { h, result } = await drainWith([{ type: 'cordoned', node: 'w1', alreadyCordoned: false }], { ok: false, failure: 'CANCELLED', reason: 'cancelled', reasonCoded: bare(message('removal.drainCancelled')), blocking: [] }, { during: (harness) => harness.interrupt() });
    expect(result).toEqual({ outcome: 'INTERRUPTED' });
    expect(kindsAndCodes(h.events)).toEqual([['CORDONED', 'removal.event.cordoned']]);
  });

  it('deletes the pods of a dead node at once when ungraceful, with no timeout', async () => {
    const { h, result, calls } = await drainWith([{ type: 'pod-deleted', pod: 'shop/api-1' }], { ok: true, evicted: ['shop/api-1'], skipped: [] }, { run: { options: { ungraceful: true, force: true, timeoutSeconds: 60 } } });
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(calls).toMatchObject([{ drain: 'ungraceful', options: { force: true, deleteEmptyDirData: false, ignoreDaemonSets: false } }]);
    expect(calls[0].options).not.toHaveProperty('timeoutSeconds');
    expect(kindsAndCodes(h.events)).toEqual([
      ['POD_FORCE_DELETED', 'removal.event.podForceDeleted'],
      ['DRAIN_FINISHED', 'removal.event.drained'],
    ]);
    expect(h.events[1]).toMatchObject({ message: { params: { ungraceful: true } } });
  });
});
