import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { HOST_TARGET, nodeOf, type PhaseHarness, phaseHarness, runningRun } from '../../testing/phase-harness';
import type { KubeletStop } from '../host-commands';
import { StopKubeletPhase } from './stop-kubelet.phase';


/** The phase against a host whose `systemctl stop kubelet` comes to `stops`, one per attempt (the last repeats; null: no SSH access recorded). */
async function stopWith(stops: KubeletStop | readonly KubeletStop[] | null, origin: 'ADDED' | 'DISCOVERED' = 'ADDED', during: (h: PhaseHarness, attempt: number) => void = () => undefined) {
  const run = runningRun({ phase: 'STOP_KUBELET' });
  const h = phaseHarness(run);
  const clock = new FakeClock();
  const asked: unknown[] = [];
  const askedAt: number[] = [];
  const updates: unknown[] = [];
  const answers = stops === null ? [] : Array.isArray(stops) ? stops : [stops];
  const phase = new StopKubeletPhase({
    clock,
    hostWaitMs: 120_000,
    nodes: {
      get: async () => nodeOf(run, { origin }),
      update: async (_id, fields) => {
        updates.push(fields);
        return nodeOf(run, fields);
      },
    },
    hosts: () => (stops === null ? null : HOST_TARGET),
    hostCommands: {
      stopKubelet: async (target) => {
        asked.push(target);
        askedAt.push(clock.now() - Date.parse('2026-12-01T00:00:00.000Z'));
        during(h, asked.length);
        return answers[Math.min(asked.length, answers.length) - 1] as KubeletStop;
      },
    },
  });
  return { result: await phase.run(h.ctx), events: h.events, asked, askedAt, blockers: h.blockers, updates };
}

const host = 'core@198.18.0.11:22';
const refused: KubeletStop = { outcome: 'UNREACHABLE', message: message('removal.host.raw', { text: 'connect ECONNREFUSED' }) };

describe('STOP_KUBELET', () => {
  it.each([
    ['stopped', { outcome: 'STOPPED', message: message('removal.host.kubeletStopped', { host }) }, 'KUBELET_STOPPED', 'removal.host.kubeletStopped'],
    ['not installed', { outcome: 'NOT_INSTALLED', message: message('removal.host.noKubelet', { host, output: 'Unit kubelet.service not loaded.' }) }, 'KUBELET_NOT_STOPPED', 'removal.host.noKubelet'],
  ] as const)('goes on when the kubelet is %s, saying so', async (_case, stop, kind, code) => {
    const { result, events, asked } = await stopWith(stop);
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(asked).toEqual([HOST_TARGET]);
    expect(events).toMatchObject([{ kind, message: { code } }]);
  });

  it('waits for a host that does not answer, naming it as the blocker, and stops the kubelet once it answers', async () => {
    const { result, events, askedAt, blockers } = await stopWith([refused, refused, { outcome: 'STOPPED', message: message('removal.host.kubeletStopped', { host }) }]);
    expect(result).toEqual({ outcome: 'NEXT' });
    // Asked again after 5 s, then 10 s.
    expect(askedAt).toEqual([0, 5000, 15_000]);
    expect(events.map((event) => event.kind)).toEqual(['HOST_WAITING', 'KUBELET_STOPPED']);
    expect(events[0].message).toMatchObject({ code: 'removal.event.hostWaiting', params: { host: HOST_TARGET.host, minutes: 2 } });
    const since = Date.parse('2026-12-01T00:00:00.000Z');
    expect(blockers).toEqual([
      { blocker: { code: 'removal.blocker.hostUnreachable', params: { host: HOST_TARGET.host, since, error: { code: 'removal.host.raw', params: { text: 'connect ECONNREFUSED' } } } }, since },
      { blocker: { code: 'removal.blocker.hostUnreachable', params: { host: HOST_TARGET.host, since, error: { code: 'removal.host.raw', params: { text: 'connect ECONNREFUSED' } } } }, since },
      { blocker: null, since: undefined },
    ]);
    expect(message('removal.blocker.hostUnreachable', blockers[0].blocker?.params ?? {}).message).toMatch(/^host 198\.18\.0\.11 unreachable since \d{1,2}:\d{2}:\d{2}.* \(connect ECONNREFUSED\)$/);
  });

  it('ends the run before the Node is deleted when the host does not answer within the wait, saying what to do', async () => {
    const { result, events, askedAt, updates } = await stopWith(refused);
    expect(result).toMatchObject({ outcome: 'FAILED', reason: { code: 'removal.hostWaitExpired', params: { host: HOST_TARGET.host, minutes: 2 } } });
    expect((result as { reason: { message: string } }).reason.message).toContain('remove the node again and skip the host-side part');
    // 5, 10, 20, 30, 30, 25 s: the last pause ends at the deadline.
    expect(askedAt).toEqual([0, 5000, 15_000, 35_000, 65_000, 95_000, 120_000]);
    expect(events.map((event) => event.kind)).toEqual(['HOST_WAITING', 'KUBELET_NOT_STOPPED']);
    expect(updates).toEqual([]);
  });

  it('goes on without the host once an operator skips the host-side part, marking the node reinstall required', async () => {
    const skip = { actor: 'operator', reason: 'the server is dead, RMA-7', at: '2026-12-01T00:00:07.000Z' };
    const { result, events, asked, updates, blockers } = await stopWith(refused, 'ADDED', (h, attempt) => attempt === 2 && h.skipHost(skip));
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(asked).toHaveLength(2);
    expect(events).toMatchObject([
      { kind: 'HOST_WAITING' },
      { kind: 'HOST_SKIPPED', message: { code: 'removal.event.hostSkipped', params: { actor: 'operator', reason: 'the server is dead, RMA-7' } } },
      { kind: 'KUBELET_NOT_STOPPED', message: { code: 'removal.host.kubeletSkipped', params: { actor: 'operator' } } },
    ]);
    expect(updates).toEqual([{ reinstallRequired: { code: 'node.reinstallRequired.hostSkipped', params: { actor: 'operator', reason: 'the server is dead, RMA-7' } } }]);
    expect(blockers.at(-1)).toEqual({ blocker: null, since: undefined });
  });

  it('ends the run before the Node is deleted when the kubelet would not stop', async () => {
    const said = message('removal.host.stopFailed', { host, output: 'Job for kubelet.service canceled.' });
    const { result, events } = await stopWith({ outcome: 'FAILED', message: said });
    expect(events).toEqual([{ kind: 'KUBELET_NOT_STOPPED', message: said }]);
    expect(result).toMatchObject({ outcome: 'FAILED', blocking: [], reason: { code: 'removal.kubeletNotStopped', params: { error: { code: said.code } } } });
  });

  it.each([
    ['added', 'ADDED', false],
    ['discovered', 'DISCOVERED', true],
  ] as const)('passes a %s node without SSH access, naming why', async (_case, origin, discovered) => {
    const { result, events, asked } = await stopWith(null, origin);
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(asked).toEqual([]);
    expect(events).toMatchObject([{ kind: 'KUBELET_NOT_STOPPED', message: { code: 'removal.event.noSshKubelet', params: { node: 'w1', discovered } } }]);
  });
});
