import { NODE_STATUSES, type NodeStatus } from '@ccos/shared/domain';
import { describe, expect, it } from 'vitest';
import { NO_ACTIONS, availableActions, hasAnyAction } from './node-actions';

const OPERATOR = { operator: true, admin: false };
const ADMIN = { operator: true, admin: true };
const VIEWER = { operator: false, admin: false };
const added = (status: NodeStatus, offeredHostKeyFingerprint: string | null = null) => ({ status, origin: 'ADDED' as const, role: 'worker', offeredHostKeyFingerprint });

describe('the buttons a node page offers', () => {
  it('offers a VIEWER nothing, whatever the status', () => {
    for (const status of NODE_STATUSES) {
      expect(availableActions(added(status), VIEWER)).toEqual(NO_ACTIONS);
    }
  });

  it('offers nothing on a control-plane node, even to an ADMIN', () => {
    expect(hasAnyAction(availableActions({ ...added('JOINED'), role: 'master' }, ADMIN))).toBe(false);
  });

  it('offers Install on a host ready for it, and Retry but not Install after a failure', () => {
    expect(availableActions(added('READY_TO_INSTALL'), OPERATOR)).toMatchObject({ install: true, retry: false, remove: false });
    expect(availableActions(added('INSTALL_FAILED'), OPERATOR)).toMatchObject({ install: false, retry: true });
  });

  it('lets only an ADMIN accept a changed host key, and only when the host offered one', () => {
    expect(availableActions(added('HOST_KEY_CHANGED', 'SHA256:x'), OPERATOR).acceptHostKey).toBe(false);
    expect(availableActions(added('HOST_KEY_CHANGED', 'SHA256:x'), ADMIN).acceptHostKey).toBe(true);
    expect(availableActions(added('HOST_KEY_CHANGED', null), ADMIN).acceptHostKey).toBe(false);
    // Re-copying would meet the changed key again.
    expect(availableActions(added('HOST_KEY_CHANGED', 'SHA256:x'), ADMIN).recopy).toBe(false);
  });

  it('offers Remove on a joined node and Uncordon only after a failed drain', () => {
    expect(availableActions(added('JOINED'), OPERATOR)).toMatchObject({ remove: true, uncordon: false, install: false });
    expect(availableActions(added('DRAIN_FAILED'), OPERATOR)).toMatchObject({ uncordon: true });
  });

  it('offers Cancel removal only while the drain can still be stopped', () => {
    expect(availableActions(added('REMOVING'), OPERATOR, false).cancelRemoval).toBe(false);
    expect(availableActions(added('REMOVING'), OPERATOR, true).cancelRemoval).toBe(true);
  });

  it('never offers an install to a node found in the cluster, but does offer its removal', () => {
    const discovered = { ...added('JOINED'), origin: 'DISCOVERED' as const };
    expect(availableActions(discovered, OPERATOR)).toMatchObject({ install: false, retry: false, recopy: false, remove: true });
  });
});
