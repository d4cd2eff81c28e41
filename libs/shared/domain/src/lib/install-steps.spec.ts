import { describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import { INSTALL_STEPS, STEP_CATALOGUE, type StepEventLike, resumeStep, summariseSteps } from './install-steps';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));

describe('install step catalogue', () => {
  it('lists the six steps of the design in order, each with English and Chinese titles and a hint', () => {
    expect(INSTALL_STEPS).toEqual(['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET']);
    expect(STEP_CATALOGUE.map((entry) => entry.step)).toEqual(INSTALL_STEPS);
    for (const entry of STEP_CATALOGUE) {
      expect(entry.title.message).not.toBe('');
      expect(formatMessage('zh-CN', entry.title.code)).toMatch(/[\u4e00-\u9fff]/);
      expect(entry.hint.message.length).toBeGreaterThan(20);
      expect(formatMessage('zh-CN', entry.hint.code)).toMatch(/[\u4e00-\u9fff]/);
    }
  });
});

describe('summariseSteps', () => {
  const events: StepEventLike[] = [
    { seq: 1, step: 'PREFLIGHT', status: 'STARTED', at: at(1) },
    { seq: 2, step: 'PREFLIGHT', status: 'SUCCEEDED', at: at(2) },
    { seq: 3, step: 'DOWNLOAD_BINARIES', status: 'STARTED', at: at(3) },
    { seq: 4, step: 'DOWNLOAD_BINARIES', status: 'PROGRESS', progress: 40, message: 'kubelet', at: at(4) },
    { seq: 5, step: 'DOWNLOAD_BINARIES', status: 'FAILED', message: 'checksum mismatch', at: at(5) },
  ];

  it('folds events into one summary per step, pending steps included', () => {
    const summary = summariseSteps(events);
    expect(summary.map((s) => s.state)).toEqual(['SUCCEEDED', 'FAILED', 'PENDING', 'PENDING', 'PENDING', 'PENDING']);
    expect(summary[0]).toMatchObject({ progress: 100, startedAt: at(1), finishedAt: at(2) });
    expect(summary[1]).toMatchObject({ progress: 40, message: 'checksum mismatch', finishedAt: at(5) });
  });

  it('applies events by sequence, so duplicates and late arrivals change nothing', () => {
    const shuffled = [events[4], events[0], events[2], events[1], events[3], events[1], events[4]];
    expect(summariseSteps(shuffled)).toEqual(summariseSteps(events));
  });

  it('resumes at the first step that did not succeed, and restarts it on a new STARTED', () => {
    expect(resumeStep(summariseSteps(events))).toBe('DOWNLOAD_BINARIES');
    const retried = summariseSteps([...events, { seq: 6, step: 'DOWNLOAD_BINARIES', status: 'STARTED', at: at(6) }]);
    expect(retried[1]).toMatchObject({ state: 'RUNNING', progress: 0, finishedAt: null, startedAt: at(6) });
  });

  it('counts the steps before where a resumed run started as done', () => {
    const resumed = summariseSteps([
      { seq: 1, step: 'INSTALL_PACKAGES', status: 'STARTED', at: at(1) },
      { seq: 2, step: 'INSTALL_PACKAGES', status: 'SUCCEEDED', at: at(2) },
      { seq: 3, step: 'INSTALL_SERVICES', status: 'FAILED', at: at(3) },
    ]);
    expect(resumeStep(resumed, 'INSTALL_PACKAGES')).toBe('INSTALL_SERVICES');
    expect(resumeStep(resumed)).toBe('PREFLIGHT');
  });

  it('has nothing to resume once every step succeeded', () => {
    const done = INSTALL_STEPS.map((step, index) => ({ seq: index + 1, step, status: 'SUCCEEDED' as const, at: at(index) }));
    expect(resumeStep(summariseSteps(done))).toBeNull();
  });
});
