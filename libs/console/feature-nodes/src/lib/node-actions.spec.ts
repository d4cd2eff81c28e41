import { describe, expect, it } from 'vitest';
import { NODE_ACTIONS } from '@ccos/shared/domain';
import { NO_ACTIONS, hasAnyAction, nodeButtons } from './node-actions';

describe('the buttons a node page offers', () => {
  it('offers a VIEWER or a signed-out user nothing, whatever the API allows', () => {
    expect(nodeButtons(NODE_ACTIONS, 'VIEWER', true)).toEqual(NO_ACTIONS);
    expect(hasAnyAction(nodeButtons(NODE_ACTIONS, null, true))).toBe(false);
  });

  it('shows exactly the actions the API lists', () => {
    expect(nodeButtons(['INSTALL', 'DELETE_RECORD'], 'OPERATOR')).toEqual({ ...NO_ACTIONS, install: true, delete: true });
    expect(nodeButtons(['REMOVE', 'UNCORDON'], 'OPERATOR')).toEqual({ ...NO_ACTIONS, remove: true, uncordon: true });
  });

  it('lets only an ADMIN accept a changed host key', () => {
    expect(nodeButtons(['ACCEPT_HOST_KEY'], 'OPERATOR').acceptHostKey).toBe(false);
    expect(nodeButtons(['ACCEPT_HOST_KEY'], 'ADMIN').acceptHostKey).toBe(true);
  });

  it('offers Cancel removal only while the drain can still be stopped', () => {
    expect(nodeButtons(['CANCEL_REMOVAL'], 'OPERATOR', false).cancelRemoval).toBe(false);
    expect(nodeButtons(['CANCEL_REMOVAL'], 'OPERATOR', true).cancelRemoval).toBe(true);
  });
});
