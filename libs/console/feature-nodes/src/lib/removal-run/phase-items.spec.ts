import { TestBed } from '@angular/core/testing';
import { describe, expect, it } from 'vitest';
import type { RemovalEventView, RemovalRunView } from '@ccos/console/data-access';
import { removalEvent, removalRun } from '@ccos/console/data-access/testing';
import { I18n } from '@ccos/console/util-i18n';
import { removalMessages } from '../removal.messages';
import { phaseItems } from './phase-items';

function phases(run: RemovalRunView, events: readonly RemovalEventView[] = []) {
  const i18n = TestBed.inject(I18n);
  return phaseItems(run, events, i18n.translator(removalMessages), i18n);
}

describe('a removal run’s phases, as the node page lists them', () => {
  it('shows the phases before the current one done, the current one running, the rest waiting; cleaning the host only when asked for', () => {
    const items = phases(removalRun({ phase: 'DELETE_NODE' }));
    expect(items.map((item) => `${item.id}:${item.state}`)).toEqual(['DRAIN:succeeded', 'STOP_KUBELET:succeeded', 'DELETE_NODE:running', 'DENY_CSRS:pending', 'REVOKE_TOKENS:pending']);
    expect(phases(removalRun({ options: { ...removalRun().options, cleanHost: true } })).at(-1)?.id).toBe('CLEAN_HOST');
  });

  it('says a phase’s last word: the latest of its own events, whatever order the others came in', () => {
    const items = phases(removalRun({ phase: 'STOP_KUBELET' }), [
      removalEvent(1, 'STARTED', { message: 'started' }),
      removalEvent(2, 'POD_EVICTED', { message: 'evicted web-1', occurredAt: '2026-11-30T05:00:10.000Z' }),
      removalEvent(3, 'KUBELET_NOT_STOPPED', { phase: 'STOP_KUBELET', message: 'kubelet still running' }),
      removalEvent(4, 'DRAIN_FINISHED', { message: 'drained', occurredAt: '2026-11-30T05:00:20.000Z' }),
      removalEvent(5, 'FINISHED', { phase: 'DONE', message: 'belongs to no phase' }),
    ]);
    expect(items.map((item) => item.message)).toEqual(['drained', 'kubelet still running', null, null, null]);
    expect(items[0].timing).toBe(TestBed.inject(I18n).formatTime('2026-11-30T05:00:20.000Z'));
  });

  it('files an event under the phase it happened in, not the phase its kind usually belongs to', () => {
    const items = phases(removalRun({ status: 'FAILED', phase: 'STOP_KUBELET' }), [
      removalEvent(1, 'DRAIN_FINISHED', { message: 'drained' }),
      removalEvent(2, 'RESUMED', { phase: 'STOP_KUBELET', message: 'picked up again in STOP_KUBELET' }),
      removalEvent(3, 'FINISHED', { phase: 'STOP_KUBELET', message: 'the removal failed' }),
    ]);
    expect(items.slice(0, 2).map((item) => item.message)).toEqual(['drained', 'the removal failed']);
  });

  it('marks the current phase of an ended run failed or cancelled, and every phase done once it succeeded', () => {
    expect(phases(removalRun({ status: 'FAILED', phase: 'DRAIN' }))[0]).toMatchObject({ state: 'failed', stateLabel: 'Failed' });
    expect(phases(removalRun({ status: 'CANCELLED', phase: 'DRAIN' }))[0]).toMatchObject({ state: 'failed', stateLabel: 'Cancelled' });
    expect(phases(removalRun({ status: 'SUCCEEDED', phase: 'DONE' })).every((item) => item.state === 'succeeded')).toBe(true);
  });
});
