import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { HOST_TARGET, nodeOf, phaseHarness, runningRun } from '../../testing/phase-harness';
import type { HostCleaning } from '../host-commands';
import { CleanHostPhase } from './clean-host.phase';

const host = 'core@198.18.0.11:22';

async function cleanWith(cleaning: HostCleaning | null) {
  const run = runningRun({ phase: 'CLEAN_HOST', options: { cleanHost: true } });
  const h = phaseHarness(run);
  const phase = new CleanHostPhase({
    clock: new FakeClock(),
    nodes: { get: async () => nodeOf(run), update: async () => nodeOf(run) },
    hosts: () => (cleaning === null ? null : HOST_TARGET),
    hostCommands: { cleanHost: async () => cleaning as HostCleaning },
  });
  return { result: await phase.run(h.ctx), events: h.events };
}

describe('CLEAN_HOST', () => {
  it('records what it removed', async () => {
    const said = message('removal.host.cleaned', { removed: '/opt/ccos-scaler, /var/lib/kubelet/pki', host });
    const { result, events } = await cleanWith({ reached: true, ok: true, removed: ['/opt/ccos-scaler', '/var/lib/kubelet/pki'], message: said });
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(events).toEqual([{ kind: 'HOST_CLEANED', message: said, detail: { removed: ['/opt/ccos-scaler', '/var/lib/kubelet/pki'] } }]);
  });

  it('records a cleaning that failed, and the run goes on: the Node is gone by now', async () => {
    const said = message('removal.host.cleanFailed', { host, output: 'rm: cannot remove' });
    const { result, events } = await cleanWith({ reached: true, ok: false, removed: ['/opt/ccos-scaler'], message: said });
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(events).toEqual([{ kind: 'HOST_NOT_CLEANED', message: said, detail: { removed: ['/opt/ccos-scaler'] } }]);
  });

  it('passes a host whose removal goes on without it, naming who skipped it', async () => {
    const run = runningRun({ phase: 'CLEAN_HOST', options: { cleanHost: true }, skipHost: { actor: 'operator', reason: 'gone', at: '2026-12-01T00:00:00.000Z' } });
    const h = phaseHarness(run);
    h.skipHost({ actor: 'operator', reason: 'gone', at: '2026-12-01T00:00:00.000Z' });
    const asked: unknown[] = [];
    const phase = new CleanHostPhase({
      clock: new FakeClock(),
      nodes: { get: async () => nodeOf(run, { reinstallRequired: { code: 'node.reinstallRequired.hostSkipped', params: {} } }), update: async () => nodeOf(run) },
      hosts: () => HOST_TARGET,
      hostCommands: { cleanHost: async (target) => (asked.push(target), { reached: true, ok: true, removed: [], message: message('removal.host.nothingLeft', { host }) }) },
    });
    expect(await phase.run(h.ctx)).toEqual({ outcome: 'NEXT' });
    expect(asked).toEqual([]);
    // Skipped in STOP_KUBELET already: the node is marked once, and this phase says why it did not clean.
    expect(h.events).toMatchObject([{ kind: 'HOST_NOT_CLEANED', message: { code: 'removal.host.cleanSkipped', params: { actor: 'operator' } } }]);
  });

  it('passes a host without SSH access', async () => {
    const { result, events } = await cleanWith(null);
    expect(result).toEqual({ outcome: 'NEXT' });
    expect(events).toMatchObject([{ kind: 'HOST_NOT_CLEANED', message: { code: 'removal.event.noSshClean', params: { node: 'w1' } } }]);
  });
});
