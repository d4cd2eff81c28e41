import type { InstallStep } from '@ccos/shared/domain';
import type { InstallRunView, StepEventView } from '../lib/nodes/node';

type StepSummary = InstallRunView['steps'][number];

/** An install run as the API sends it: RUNNING from PREFLIGHT, no step reported yet, unless `overrides` say otherwise. */
export function installRun(overrides: Partial<InstallRunView> = {}): InstallRunView {
  return {
    id: 'run-1',
    nodeId: 'n-1',
    status: 'RUNNING',
    purpose: 'INSTALL',
    startStep: 'PREFLIGHT',
    onlySteps: null,
    failedStep: null,
    reason: null,
    reasonCode: null,
    reasonParams: null,
    requestedBy: 'admin',
    agentChannel: null,
    startedAt: '2026-11-30T05:00:00.000Z',
    admittedAt: '2026-11-30T05:00:00.000Z',
    placeInLine: null,
    finishedAt: null,
    lastEventAt: null,
    steps: [],
    ...overrides,
  } as InstallRunView;
}

/** One step's summary in a run. */
export function stepSummary(step: InstallStep, overrides: Partial<StepSummary> = {}): StepSummary {
  return { step, status: 'PENDING', progress: null, message: null, messageCode: null, messageParams: null, startedAt: null, finishedAt: null, ...overrides } as StepSummary;
}

/** An event the agent reported. */
export function stepEvent(seq: number, step: InstallStep, overrides: Partial<StepEventView> = {}): StepEventView {
  return { seq, step, status: 'RUNNING', progress: null, message: `event ${seq}`, messageCode: null, messageParams: null, detail: null, occurredAt: '2026-11-30T05:00:00.000Z', ...overrides } as StepEventView;
}
