import { TestBed } from '@angular/core/testing';
import { describe, expect, it } from 'vitest';
import type { InstallRunView, StepEventView } from '@ccos/console/data-access';
import { installRun, stepEvent, stepSummary } from '@ccos/console/data-access/testing';
import { I18n } from '@ccos/console/util-i18n';
import { INSTALL_STEPS, describeStep } from '@ccos/shared/domain';
import { formatMessage } from '@ccos/shared/messages';
import { nodesMessages } from '../nodes.messages';
import { csrNamesIn, stepItems } from './step-items';

const NOW = Date.parse('2026-11-30T05:01:00.000Z');

function stepper(language: 'en' | 'zh' = 'en') {
  const i18n = TestBed.inject(I18n);
  i18n.setLanguage(language);
  const context = { t: i18n.translator(nodesMessages), i18n, clusterId: 'c-1', now: NOW };
  return { i18n, items: (run: InstallRunView, events: readonly StepEventView[]) => stepItems(run, events, context) };
}

describe('the six steps of an install run, as the node page lists them', () => {
  it('shows the running step with its progress and how long it has run, the others waiting', () => {
    const { items, i18n } = stepper();
    const run = installRun({ steps: [stepSummary('PREFLIGHT', { status: 'SUCCEEDED', startedAt: '2026-11-30T05:00:00.000Z', finishedAt: '2026-11-30T05:00:05.000Z' }), stepSummary('DOWNLOAD_BINARIES', { status: 'RUNNING', progress: 40, startedAt: '2026-11-30T05:00:30.000Z' })] });
    const shown = items(run, []);
    expect(shown.map((item) => item.id)).toEqual([...INSTALL_STEPS]);
    expect(shown.map((item) => item.state)).toEqual(['succeeded', 'running', 'pending', 'pending', 'pending', 'pending']);
    expect(shown[0]).toMatchObject({ stateLabel: 'Done', progress: null, timing: `Started ${i18n.formatTime('2026-11-30T05:00:00.000Z')} · took 5 s` });
    expect(shown[1]).toMatchObject({ stateLabel: 'Running', progress: 40, timing: `Started ${i18n.formatTime('2026-11-30T05:00:30.000Z')} · 30 s so far`, hint: null });
    expect(shown[1]?.progressLabel).toBe(`${shown[1]?.title}: 40%`);
    expect(shown[2]).toMatchObject({ stateLabel: 'Waiting', timing: '' });
  });

  it('marks the steps a retry skipped as done in an earlier run', () => {
    const { items } = stepper();
    const shown = items(installRun({ startStep: 'APPLY_IGNITION', steps: [stepSummary('APPLY_IGNITION', { status: 'RUNNING' })] }), []);
    expect(shown.map((item) => item.state)).toEqual(['skipped', 'skipped', 'skipped', 'skipped', 'running', 'pending']);
    expect(shown[0]?.stateLabel).toBe('Done in an earlier run');
    // Before the agent reports, the step the retry resumes at waits like those after it.
    expect(items(installRun({ startStep: 'APPLY_IGNITION', steps: [] }), []).map((item) => item.state)).toEqual(['skipped', 'skipped', 'skipped', 'skipped', 'pending', 'pending']);
  });

  it('shows a failed step with the catalogue’s fix and the agent’s own hint, both in the user’s language', () => {
    const { items, i18n } = stepper('zh');
    const run = installRun({ status: 'FAILED', steps: [stepSummary('PREFLIGHT', { status: 'FAILED', message: 'swap is on', messageCode: 'agent.kubelet.waitingCsrs', messageParams: { csrs: 'csr-x' } })] });
    const events = [
      stepEvent(1, 'PREFLIGHT', { status: 'FAILED', detail: { hint: 'old hint' } }),
      stepEvent(2, 'PREFLIGHT', { status: 'FAILED', detail: { hint: 'Check that this host reaches the installer service at https://s:4000.', hintCode: 'agent.service.reach.hint', hintParams: { url: 'https://s:4000' } } }),
    ];
    const [preflight] = items(run, events);
    const catalogueHint = describeStep('PREFLIGHT').hint;
    expect(preflight?.state).toBe('failed');
    expect(preflight?.stateLabel).toBe('失败');
    expect(preflight?.message).toBe(formatMessage('zh-CN', 'agent.kubelet.waitingCsrs', { csrs: 'csr-x' }));
    expect(preflight?.hint).toBe(`${i18n.server(catalogueHint.code, catalogueHint.params, catalogueHint.message)} agent 提示：${formatMessage('zh-CN', 'agent.service.reach.hint', { url: 'https://s:4000' })}`);
    expect(preflight?.title).toBe(formatMessage('zh-CN', describeStep('PREFLIGHT').title.code, describeStep('PREFLIGHT').title.params));
  });

  it('calls a step still running in a run that ended interrupted, and offers no fix for a cancelled run', () => {
    const { items } = stepper();
    const steps = [stepSummary('PREFLIGHT', { status: 'RUNNING', startedAt: '2026-11-30T05:00:00.000Z' })];
    const [interrupted] = items(installRun({ status: 'FAILED', steps }), []);
    expect(interrupted).toMatchObject({ state: 'failed', stateLabel: 'Interrupted' });
    expect(interrupted?.hint).not.toBeNull();
    expect(interrupted?.timing).toMatch(/^Started [\d:]+$/);
    const [cancelled] = items(installRun({ status: 'CANCELLED', steps }), []);
    expect(cancelled).toMatchObject({ state: 'failed', stateLabel: 'Cancelled', hint: null });
  });

  it('links each CSR the kubelet waits for to the certificates page, only while it waits', () => {
    const { items } = stepper();
    const waiting = stepSummary('START_KUBELET', { status: 'RUNNING', message: 'waiting for CSR approval: csr-a, csr-b', messageCode: 'agent.kubelet.waitingCsrs', messageParams: { csrs: 'csr-a, csr-b' } });
    const running = items(installRun({ startStep: 'START_KUBELET', steps: [waiting] }), []).at(-1);
    expect(running?.links).toEqual([
      { label: 'Review csr-a on the certificates page', commands: ['/clusters', 'c-1', 'csrs'], queryParams: { csr: 'csr-a' } },
      { label: 'Review csr-b on the certificates page', commands: ['/clusters', 'c-1', 'csrs'], queryParams: { csr: 'csr-b' } },
    ]);
    expect(running?.message).toBe('waiting for CSR approval: csr-a, csr-b');
    const ended = items(installRun({ status: 'FAILED', startStep: 'START_KUBELET', steps: [waiting] }), []).at(-1);
    expect(ended?.links).toEqual([]);
  });

  it('reads CSR names only from the message that names them', () => {
    expect(csrNamesIn({ messageCode: 'agent.kubelet.waitingCsrs', messageParams: { csrs: 'csr-a' } })).toEqual(['csr-a']);
    expect(csrNamesIn({ messageCode: 'agent.kubelet.waitingCsrs', messageParams: { csrs: '' } })).toEqual([]);
    expect(csrNamesIn({ messageCode: 'agent.other', messageParams: { csrs: 'csr-a' } })).toEqual([]);
    expect(csrNamesIn(null)).toEqual([]);
  });
});
