import { CONTROL_PLANE_ROLES, type NodeStatus, allowedFrom, canDeleteRecord } from '@ccos/shared/domain';

/** The buttons a node's page offers; each one is allowed by the node lifecycle and the user's role. */
export interface NodeActions {
  readonly install: boolean;
  readonly retry: boolean;
  readonly cancel: boolean;
  readonly recopy: boolean;
  readonly credentials: boolean;
  readonly acceptHostKey: boolean;
  readonly delete: boolean;
  readonly remove: boolean;
  readonly cancelRemoval: boolean;
  readonly uncordon: boolean;
}

export const NO_ACTIONS: NodeActions = {
  install: false,
  retry: false,
  cancel: false,
  recopy: false,
  credentials: false,
  acceptHostKey: false,
  delete: false,
  remove: false,
  cancelRemoval: false,
  uncordon: false,
};

interface NodeFacts {
  readonly status: NodeStatus;
  readonly origin: 'ADDED' | 'DISCOVERED';
  readonly role: string;
  readonly offeredHostKeyFingerprint: string | null;
  /** The add-time verdict on leftovers of an earlier membership; an install needs CLEAN or a cleaned CLEANABLE. */
  readonly hostVerdict?: { readonly verdict: string; readonly cleanedAt?: string | null } | null;
}

/** Statuses a node can only reach after it joined the cluster (the API does not expose `everJoined`). */
const AFTER_JOIN: ReadonlySet<NodeStatus> = new Set<NodeStatus>(['JOINED', 'REMOVING', 'DRAIN_FAILED', 'REMOVED']);

/**
 * What may be done to `node` now. The state machine in @ccos/shared/domain decides which
 * transitions exist; roles decide who may ask (OPERATOR for everything, ADMIN to trust a
 * new host key). Control-plane nodes are not this service's to change; nodes found in the
 * cluster rather than added here have no install to manage but can be removed.
 * `removalCancellable` says whether the running removal is still draining.
 */
export function availableActions(node: NodeFacts, roles: { readonly operator: boolean; readonly admin: boolean }, removalCancellable = false): NodeActions {
  if (!roles.operator || (CONTROL_PLANE_ROLES as readonly string[]).includes(node.role)) {
    return NO_ACTIONS;
  }
  const status = node.status;
  const added = node.origin === 'ADDED';
  // Reconnecting with the same pinned key would only hit the changed key again.
  const reconnect = added && allowedFrom('RECONNECT_REQUESTED').includes(status) && status !== 'HOST_KEY_CHANGED';
  return {
    install: added && allowedFrom('INSTALL_STARTED').includes(status) && verdictAllows(node.hostVerdict),
    retry: added && allowedFrom('INSTALL_RETRIED').includes(status),
    cancel: added && allowedFrom('INSTALL_CANCELLED').includes(status),
    recopy: reconnect,
    credentials: reconnect,
    acceptHostKey: added && roles.admin && status === 'HOST_KEY_CHANGED' && node.offeredHostKeyFingerprint !== null,
    delete: canDeleteRecord(status, AFTER_JOIN.has(status) || !added),
    remove: allowedFrom('REMOVAL_STARTED').includes(status),
    cancelRemoval: status === 'REMOVING' && removalCancellable,
    uncordon: status === 'DRAIN_FAILED',
  };
}

export function hasAnyAction(actions: NodeActions): boolean {
  return Object.values(actions).some(Boolean);
}

function verdictAllows(verdict: NodeFacts['hostVerdict']): boolean {
  return !verdict || verdict.verdict === 'CLEAN' || (verdict.verdict === 'CLEANABLE' && Boolean(verdict.cleanedAt));
}
