import { TestBed } from '@angular/core/testing';
import { describe, expect, it } from 'vitest';
import { installRun, stepEvent } from '@ccos/console/data-access/testing';
import { I18n } from '@ccos/console/util-i18n';
import { nodesMessages } from '../nodes.messages';
import { latestStepChange, runDuration, runLog } from './run-log';
import { stepTitle } from './step-items';

const events = [
  stepEvent(1, 'PREFLIGHT', { status: 'STARTED' }),
  stepEvent(2, 'PREFLIGHT', { status: 'PROGRESS' }),
  stepEvent(3, 'PREFLIGHT', { status: 'SUCCEEDED' }),
  stepEvent(4, 'DOWNLOAD_BINARIES', { status: 'STARTED' }),
  stepEvent(5, 'DOWNLOAD_BINARIES', { status: 'PROGRESS' }),
  stepEvent(6, 'DOWNLOAD_BINARIES', { status: 'PROGRESS' }),
];

describe('the agent’s event log of a run', () => {
  it('folds progress updates away until asked for', () => {
    expect(runLog(events, false)).toEqual({ shown: [events[0], events[2], events[3]], progressCount: 3 });
    expect(runLog(events, true).shown.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(runLog([], false)).toEqual({ shown: [], progressCount: 0 });
  });

  it('announces the latest step change to a screen reader, not a progress update, in the user’s language', () => {
    const i18n = TestBed.inject(I18n);
    const t = i18n.translator(nodesMessages);
    expect(latestStepChange(events, t, i18n)).toBe(`${stepTitle('DOWNLOAD_BINARIES', i18n)}: Started`);
    expect(latestStepChange(events.slice(1, 2), t, i18n)).toBe('');
    i18n.setLanguage('zh');
    expect(latestStepChange(events.slice(0, 3), t, i18n)).toBe(`${stepTitle('PREFLIGHT', i18n)}: ${t('eventStatus.SUCCEEDED')}`);
    expect(t('eventStatus.SUCCEEDED')).not.toBe('Succeeded');
  });

  it('says how long a finished run took, and a running one so far', () => {
    const i18n = TestBed.inject(I18n);
    const started = '2026-11-30T05:00:00.000Z';
    expect(runDuration(installRun({ startedAt: started, finishedAt: '2026-11-30T05:03:05.000Z' }), Date.parse('2026-12-01T00:00:00.000Z'), i18n)).toBe('3 min 5 s');
    expect(runDuration(installRun({ startedAt: started, finishedAt: null }), Date.parse('2026-11-30T05:00:42.000Z'), i18n)).toBe('42 s');
  });
});
