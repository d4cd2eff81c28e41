import { describe, expect, it } from 'vitest';
import { type BatchPhase, batchState, countBatch, nextBatchStep } from './node-batch';
import type { NodeStatus } from './node-lifecycle';

describe('nextBatchStep', () => {
  it.each<[BatchPhase, NodeStatus, boolean, ReturnType<typeof nextBatchStep>]>([
    ['ADDED', 'READY_TO_INSTALL', false, { kind: 'WAIT' }],
    ['QUEUED', 'ADDING', false, { kind: 'WAIT' }],
    ['QUEUED', 'READY_TO_INSTALL', false, { kind: 'START', via: 'install' }],
    ['QUEUED', 'READY_TO_INSTALL', true, { kind: 'MOVE', to: 'HELD' }],
    ['QUEUED', 'UNREACHABLE', false, { kind: 'MOVE', to: 'FAILED' }],
    ['QUEUED', 'AUTH_FAILED', false, { kind: 'MOVE', to: 'FAILED' }],
    ['QUEUED', 'PRECHECK_FAILED', false, { kind: 'MOVE', to: 'FAILED' }],
    ['QUEUED', 'HOST_KEY_CHANGED', false, { kind: 'MOVE', to: 'HELD' }],
    ['QUEUED', 'INSTALL_FAILED', false, { kind: 'START', via: 'retry' }],
    ['QUEUED', 'INSTALLING', false, { kind: 'MOVE', to: 'ACTIVE' }],
    ['ACTIVE', 'INSTALLING', false, { kind: 'WAIT' }],
    ['ACTIVE', 'STALLED', false, { kind: 'MOVE', to: 'FAILED' }],
    ['FAILED', 'JOINED', false, { kind: 'MOVE', to: 'JOINED' }],
    ['ACTIVE', 'READY_TO_INSTALL', false, { kind: 'RESUME', via: 'install' }],
    ['ACTIVE', 'INSTALL_FAILED', false, { kind: 'MOVE', to: 'FAILED' }],
    ['ACTIVE', 'JOINED', false, { kind: 'MOVE', to: 'JOINED' }],
    ['HELD', 'READY_TO_INSTALL', false, { kind: 'MOVE', to: 'QUEUED' }],
    ['HELD', 'READY_TO_INSTALL', true, { kind: 'WAIT' }],
    ['FAILED', 'INSTALL_FAILED', false, { kind: 'WAIT' }],
    ['CANCELLED', 'READY_TO_INSTALL', false, { kind: 'WAIT' }],
    ['QUEUED', 'REMOVED', false, { kind: 'MOVE', to: 'CANCELLED' }],
  ])('%s host with a %s node (dirty %s): %j', (phase, status, dirty, step) => {
    expect(nextBatchStep(phase, status, dirty)).toEqual(step);
  });
});

describe('countBatch and batchState', () => {
  it('counts each phase and names the batch state', () => {
    const counts = countBatch(['JOINED', 'JOINED', 'FAILED', 'ACTIVE', 'QUEUED', 'HELD', 'CANCELLED']);
    expect(counts).toEqual({ total: 7, added: 0, queued: 1, installing: 1, joined: 2, failed: 1, cancelled: 1, waitingForOperator: 1 });
    expect(batchState(counts)).toBe('INSTALLING');
    expect(batchState(countBatch(['JOINED', 'FAILED']))).toBe('NEEDS_ATTENTION');
    expect(batchState(countBatch(['JOINED', 'CANCELLED']))).toBe('FINISHED');
    expect(batchState(countBatch(['ADDED', 'ADDED']))).toBe('ADDED');
  });
});
