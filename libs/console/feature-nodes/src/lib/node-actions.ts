import { type NodeStatus, allowedFrom, canDeleteRecord } from '@ccos/shared/domain';

/** The buttons a node's page offers; each one is allowed by the node lifecycle and the user's role. */
export interface NodeActions {
  readonly install: boolean;
  readonly retry: boolean;
  readonly cancel: boolean;
  readonly recopy: boolean;
  readonly credentials: boolean;
  readonly acceptHostKey: boolean;
  readonly delete: boolean;
}

export const NO_ACTIONS: NodeActions = { install: false, retry: false, cancel: false, recopy: false, credentials: false, acceptHostKey: false, delete: false };

interface NodeFacts {
  readonly status: NodeStatus;
  readonly origin: 'ADDED' | 'DISCOVERED';
  readonly role: string;
  readonly offeredHostKeyFingerprint: string | null;
}

/** Statuses a node can only reach after it joined the cluster (the API does not expose `everJoined`). */
const AFTER_JOIN: ReadonlySet<NodeStatus> = new Set<NodeStatus>(['JOINED', 'REMOVING', 'DRAIN_FAILED', 'REMOVED']);

/**
 * What may be done to `node` now. The state machine in @ccos/shared/domain decides which
 * transitions exist; roles decide who may ask (OPERATOR for everything, ADMIN to trust a
 * new host key). Nodes found in the cluster rather than added here, and control-plane
 * nodes, have no install to manage.
 */
export function availableActions(node: NodeFacts, roles: { readonly operator: boolean; readonly admin: boolean }): NodeActions {
  if (!roles.operator || node.origin !== 'ADDED' || node.role !== 'worker') {
    return NO_ACTIONS;
  }
  const status = node.status;
  // Reconnecting with the same pinned key would only hit the changed key again.
  const reconnect = allowedFrom('RECONNECT_REQUESTED').includes(status) && status !== 'HOST_KEY_CHANGED';
  return {
    install: allowedFrom('INSTALL_STARTED').includes(status),
    retry: allowedFrom('INSTALL_RETRIED').includes(status),
    cancel: allowedFrom('INSTALL_CANCELLED').includes(status),
    recopy: reconnect,
    credentials: reconnect,
    acceptHostKey: roles.admin && status === 'HOST_KEY_CHANGED' && node.offeredHostKeyFingerprint !== null,
    delete: canDeleteRecord(status, AFTER_JOIN.has(status)),
  };
}

export function hasAnyAction(actions: NodeActions): boolean {
  return Object.values(actions).some(Boolean);
}
