import { describe, expect, it } from 'vitest';
import { type NodeActionFacts, actionsFor, canCleanHost, canUncordon, everJoinedAfter, isInCluster, mayDeleteRecord, nextStepOf, nodeActions } from './node-actions';
import { NODE_STATUSES, type NodeStatus } from './node-lifecycle';

const added = (status: NodeStatus, more: Partial<NodeActionFacts> = {}): NodeActionFacts => ({
  status,
  origin: 'ADDED',
  role: 'worker',
  everJoined: ['JOINED', 'REMOVING', 'DRAIN_FAILED', 'REMOVED'].includes(status),
  unschedulable: false,
  offeredHostKeyFingerprint: null,
  hostVerdict: null,
  ...more,
});

describe('the actions a node allows', () => {
  it('allows nothing on a control-plane node, whatever its status', () => {
    for (const status of NODE_STATUSES) {
      expect(nodeActions(added(status, { role: 'master' }))).toEqual([]);
      expect(nodeActions(added(status, { role: 'control-plane' }))).toEqual([]);
    }
  });

  it('allows Install on a host ready for it, and Retry but not Install after a failure', () => {
    expect(nodeActions(added('READY_TO_INSTALL'))).toEqual(['INSTALL', 'RECOPY_AGENT', 'UPDATE_CREDENTIALS', 'DELETE_RECORD']);
    expect(nodeActions(added('INSTALL_FAILED'))).toEqual(['RETRY_INSTALL', 'RECOPY_AGENT', 'UPDATE_CREDENTIALS', 'DELETE_RECORD']);
    expect(nodeActions(added('INSTALLING'))).toEqual(['CANCEL_INSTALL']);
    expect(nodeActions(added('STALLED'))).toEqual(['RETRY_INSTALL', 'CANCEL_INSTALL', 'DELETE_RECORD']);
  });

  it('blocks Install while the host has leftovers, offers their cleanup once, and allows Install after it', () => {
    const cleanable = added('READY_TO_INSTALL', { hostVerdict: { verdict: 'CLEANABLE', cleanedAt: null } });
    expect(nodeActions(cleanable)).toContain('CLEAN_HOST');
    expect(nodeActions(cleanable)).not.toContain('INSTALL');
    const cleaned = added('READY_TO_INSTALL', { hostVerdict: { verdict: 'CLEANABLE', cleanedAt: '2026-01-01T00:00:00Z' } });
    expect(nodeActions(cleaned)).toContain('INSTALL');
    expect(nodeActions(cleaned)).not.toContain('CLEAN_HOST');
    const reinstall = added('READY_TO_INSTALL', { hostVerdict: { verdict: 'REINSTALL_REQUIRED' } });
    expect(nodeActions(reinstall)).not.toContain('INSTALL');
    expect(nodeActions(reinstall)).not.toContain('CLEAN_HOST');
  });

  it('allows accepting a changed host key only when the host offered one, and no re-copy into the changed key', () => {
    expect(nodeActions(added('HOST_KEY_CHANGED', { offeredHostKeyFingerprint: 'SHA256:x' }))).toEqual(['ACCEPT_HOST_KEY', 'DELETE_RECORD']);
    expect(nodeActions(added('HOST_KEY_CHANGED'))).toEqual(['DELETE_RECORD']);
  });

  it('allows Remove on a joined node, Uncordon after a failed drain or on a cordoned joined node', () => {
    expect(nodeActions(added('JOINED'))).toEqual(['REMOVE']);
    expect(nodeActions(added('JOINED', { unschedulable: true }))).toEqual(['REMOVE', 'UNCORDON']);
    expect(nodeActions(added('DRAIN_FAILED', { unschedulable: true }))).toEqual(['REMOVE', 'UNCORDON']);
    expect(nodeActions(added('REMOVING'))).toEqual(['CANCEL_REMOVAL']);
  });

  it('keeps the record of a node that was ever in the cluster until it is REMOVED', () => {
    expect(nodeActions(added('REMOVED'))).toEqual(['DELETE_RECORD']);
    // A record that went back to INSTALL_FAILED after joining (a re-install) is still kept.
    expect(nodeActions(added('INSTALL_FAILED', { everJoined: true }))).not.toContain('DELETE_RECORD');
  });

  it('never offers an install or SSH access to a node found in the cluster, but does offer its removal', () => {
    const discovered = added('JOINED', { origin: 'DISCOVERED', everJoined: false });
    expect(nodeActions(discovered)).toEqual(['REMOVE']);
    expect(nodeActions({ ...discovered, status: 'REMOVED' })).toEqual(['DELETE_RECORD']);
  });

  it('lets the API delete a record exactly when a worker lists Delete record (one rule for both)', () => {
    for (const status of NODE_STATUSES) {
      for (const more of [{}, { everJoined: false }, { everJoined: true }, { origin: 'DISCOVERED', everJoined: false }] as const) {
        const node = added(status, more);
        expect(mayDeleteRecord(node), `${status} ${JSON.stringify(more)}`).toBe(nodeActions(node).includes('DELETE_RECORD'));
      }
    }
    // Found in the cluster: its record stays until it is REMOVED, whatever everJoined says.
    expect(mayDeleteRecord(added('JOINED', { origin: 'DISCOVERED', everJoined: false }))).toBe(false);
  });
});

describe('who may ask for an action', () => {
  const actions = nodeActions(added('HOST_KEY_CHANGED', { offeredHostKeyFingerprint: 'SHA256:x' }));

  it('gives a VIEWER or a signed-out user nothing', () => {
    expect(actionsFor(actions, 'VIEWER')).toEqual([]);
    expect(actionsFor(actions, null)).toEqual([]);
  });

  it('lets only an ADMIN accept a changed host key', () => {
    expect(actionsFor(actions, 'OPERATOR')).toEqual(['DELETE_RECORD']);
    expect(actionsFor(actions, 'ADMIN')).toEqual(['ACCEPT_HOST_KEY', 'DELETE_RECORD']);
  });
});

describe('the single rules behind the actions', () => {
  it('uncordons only DRAIN_FAILED and JOINED nodes', () => {
    expect(NODE_STATUSES.filter(canUncordon)).toEqual(['JOINED', 'DRAIN_FAILED']);
  });

  it('cleans a host only before its install, and only once', () => {
    expect(canCleanHost('READY_TO_INSTALL', { verdict: 'CLEANABLE' })).toBe(true);
    expect(canCleanHost('INSTALL_FAILED', { verdict: 'CLEANABLE' })).toBe(false);
    expect(canCleanHost('READY_TO_INSTALL', { verdict: 'CLEANABLE', cleanedAt: '2026-01-01T00:00:00Z' })).toBe(false);
    expect(canCleanHost('READY_TO_INSTALL', null)).toBe(false);
  });

  it('counts a node in the cluster from JOINED until it is REMOVED', () => {
    expect(NODE_STATUSES.filter(isInCluster)).toEqual(['JOINED', 'REMOVING', 'DRAIN_FAILED']);
  });

  it('marks a node ever joined from its first JOINED on, and never unmarks it', () => {
    expect(everJoinedAfter('JOINED', false)).toBe(true);
    expect(everJoinedAfter('INSTALLING', false)).toBe(false);
    expect(everJoinedAfter('REMOVED', true)).toBe(true);
  });
});

describe('what to do next', () => {
  const verdicts = [null, { verdict: 'CLEAN' }, { verdict: 'CLEANABLE' }, { verdict: 'CLEANABLE', cleanedAt: '2026-12-05T00:00:00Z' }, { verdict: 'REINSTALL_REQUIRED' }] as const;

  it('on a host ready to install, agrees with the actions: install when Install is offered, clean when Clean host is, else reinstall the OS', () => {
    for (const hostVerdict of verdicts) {
      const node = added('READY_TO_INSTALL', { hostVerdict });
      const actions = nodeActions(node);
      const step = nextStepOf(node);
      expect(step === 'INSTALL', JSON.stringify(hostVerdict)).toBe(actions.includes('INSTALL'));
      expect(step === 'CLEAN_HOST', JSON.stringify(hostVerdict)).toBe(actions.includes('CLEAN_HOST'));
    }
    // A host this service removed (its machine-id) cannot be cleaned into joining: Install stays off and the step says why.
    const removedMachine = added('READY_TO_INSTALL', { hostVerdict: { verdict: 'REINSTALL_REQUIRED' } });
    expect(nextStepOf(removedMachine)).toBe('REINSTALL_OS');
    expect(nodeActions(removedMachine)).not.toContain('INSTALL');
  });

  it('names the failure to fix for each failed status, and nothing for a node that is busy or in the cluster', () => {
    for (const status of ['AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED', 'INSTALL_FAILED', 'STALLED', 'DRAIN_FAILED'] as const) {
      expect(nextStepOf(added(status))).toBe(status);
    }
    for (const status of ['ADDING', 'INSTALLING', 'JOINED', 'REMOVING', 'REMOVED'] as const) {
      expect(nextStepOf(added(status))).toBeNull();
    }
  });
});
