import { describe, expect, it } from 'vitest';
import { NODE_EVENTS, NODE_STATUSES, type NodeEvent, type NodeStatus, canDeleteRecord, transition } from './node-lifecycle';

/** The complete transition table, written out by hand so that any change to the rules must change this test too. */
const EXPECTED: Record<NodeEvent, Partial<Record<NodeStatus, NodeStatus>>> = {
  AGENT_COPIED: { ADDING: 'READY_TO_INSTALL' },
  SSH_AUTH_FAILED: { ADDING: 'AUTH_FAILED', INSTALLING: 'AUTH_FAILED', STALLED: 'AUTH_FAILED' },
  SSH_UNREACHABLE: { ADDING: 'UNREACHABLE' },
  HOST_KEY_MISMATCH: {
    ADDING: 'HOST_KEY_CHANGED', READY_TO_INSTALL: 'HOST_KEY_CHANGED', INSTALLING: 'HOST_KEY_CHANGED',
    STALLED: 'HOST_KEY_CHANGED', INSTALL_FAILED: 'HOST_KEY_CHANGED',
  },
  PRECHECK_FAILED: { ADDING: 'PRECHECK_FAILED' },
  RECONNECT_REQUESTED: {
    READY_TO_INSTALL: 'ADDING', INSTALL_FAILED: 'ADDING', AUTH_FAILED: 'ADDING', UNREACHABLE: 'ADDING',
    HOST_KEY_CHANGED: 'ADDING', PRECHECK_FAILED: 'ADDING',
  },
  INSTALL_STARTED: { READY_TO_INSTALL: 'INSTALLING' },
  INSTALL_FAILED: { INSTALLING: 'INSTALL_FAILED', STALLED: 'INSTALL_FAILED' },
  INSTALL_CANCELLED: { INSTALLING: 'INSTALL_FAILED', STALLED: 'INSTALL_FAILED' },
  INSTALL_RETRIED: { INSTALL_FAILED: 'INSTALLING', STALLED: 'INSTALLING' },
  AGENT_SILENT: { INSTALLING: 'STALLED' },
  AGENT_HEARD: { STALLED: 'INSTALLING' },
  NODE_READY: { INSTALLING: 'JOINED', STALLED: 'JOINED' },
  REMOVAL_STARTED: { JOINED: 'REMOVING', DRAIN_FAILED: 'REMOVING' },
  DRAIN_FAILED: { REMOVING: 'DRAIN_FAILED' },
  REMOVAL_SUCCEEDED: { REMOVING: 'REMOVED' },
  UNCORDONED: { DRAIN_FAILED: 'JOINED', REMOVING: 'JOINED' },
  NODE_VANISHED: { JOINED: 'REMOVED', DRAIN_FAILED: 'REMOVED' },
  HOST_ADDED_AGAIN: { JOINED: 'REMOVED' },
};

const cases = NODE_EVENTS.flatMap((event) => NODE_STATUSES.map((status) => ({ event, status, to: EXPECTED[event][status] })));

describe('node lifecycle', () => {
  it.each(cases.filter((c) => c.to))('$event from $status leads to $to', ({ event, status, to }) => {
    expect(transition(status, event)).toEqual({ ok: true, to });
  });

  it.each(cases.filter((c) => !c.to))('$event from $status is refused with a reason', ({ event, status }) => {
    const result = transition(status, event);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason.code).toBe('node.transitionRefused');
    expect(result.ok ? '' : result.reason.message).toContain(`while the node is ${status}`);
  });

  it('never leaves REMOVED: a removed host must be added and installed from scratch', () => {
    for (const event of NODE_EVENTS) {
      expect(transition('REMOVED', event).ok).toBe(false);
    }
  });

  it.each([
    { status: 'READY_TO_INSTALL', everJoined: false, deletable: true },
    { status: 'AUTH_FAILED', everJoined: false, deletable: true },
    { status: 'INSTALL_FAILED', everJoined: false, deletable: true },
    { status: 'INSTALLING', everJoined: false, deletable: false },
    { status: 'JOINED', everJoined: true, deletable: false },
    { status: 'DRAIN_FAILED', everJoined: true, deletable: false },
    { status: 'REMOVED', everJoined: true, deletable: true },
  ] as const)('record of a $status node (ever joined: $everJoined) deletable: $deletable', ({ status, everJoined, deletable }) => {
    expect(canDeleteRecord(status, everJoined)).toBe(deletable);
  });
});
