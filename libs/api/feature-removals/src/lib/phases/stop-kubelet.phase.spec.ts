import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { HOST_TARGET, nodeOf, phaseHarness, runningRun } from '../../testing/phase-harness';
import type { KubeletStop } from '../host-commands';
import { StopKubeletPhase } from './stop-kubelet.phase';


/** The phase against a host whose `systemctl stop kubelet` comes to `stop` (null: no SSH access recorded). */
async function stopWith(stop: KubeletStop | null, origin: 'ADDED' | 'DISCOVERED' = 'ADDED') {
  const run = runningRun({ phase: 'STOP_KUBELET' });
  const h = phaseHarness(run);
  const asked: unknown[] = [];
  const phase = new StopKubeletPhase({
    nodes: { get: async () => nodeOf(run, { origin }) },
    hosts: () => (stop === null ? null : HOST_TARGET),
    hostCommands: {
      stopKubelet: async (target) => {
        asked.push(target);
        return stop as KubeletStop;
      },
    },
  });
  return { result: await phase.run(h.ctx), events: h.events, asked };
}

const host = 'core@198.18.0.11:22';

describe('STOP_KUBELET', () => {
  it.each([
    ['stopped', { outcome: 'STOPPED', message: message('removal.host.kubeletStopped', { host }) }, 'KUBELET_STOPPED', 'removal.host.kubeletStopped'],
    ['not installed', { outcome: 'NOT_INSTALLED', message: message('removal.host.noKubelet', { host, output: 'Unit kubelet.service not loaded.' }) }, 'KUBELET_NOT_STOPPED', 'removal.host.noKubelet'],
    ['unreachable', { outcome: 'UNREACHABLE', message: message('removal.host.raw', { text: 'connect ECONNREFUSED' }) }, 'KUBELET_NOT_STOPPED', 'removal.event.hostUnreachable'],
  ] as const)('goes on when the kubelet is %s, saying so', async (_case, stop, kind, code) => {
    const { result, events, asked } = await stopWith(stop);
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(asked).toEqual([HOST_TARGET]);
    expect(events).toMatchObject([{ kind, message: { code } }]);
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
