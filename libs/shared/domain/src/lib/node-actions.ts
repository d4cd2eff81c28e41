import { type CodedText, message } from '@ccos/shared/messages';
import { type HostVerdictKind, verdictAllowsInstall } from './host-leftovers';
import { type NodeOrigin, type NodeStatus, allowedFrom, canDeleteRecord } from './node-lifecycle';
import { CONTROL_PLANE_ROLES } from './node-removal';
import { type Role, roleAllows } from './roles';

/**
 * What an operator may ask of a node, as the API lists it on each node (`availableActions`).
 * The lifecycle decides which exist for a node's state; `NODE_ACTION_ROLE` who may ask.
 */
export const NODE_ACTIONS = [
  'INSTALL',
  'RETRY_INSTALL',
  'CANCEL_INSTALL',
  'RECOPY_AGENT',
  'UPDATE_CREDENTIALS',
  'ACCEPT_HOST_KEY',
  'CLEAN_HOST',
  'DELETE_RECORD',
  'REMOVE',
  'CANCEL_REMOVAL',
  'UNCORDON',
] as const;
export type NodeAction = (typeof NODE_ACTIONS)[number];

/** The weakest role that may ask for each action. */
export const NODE_ACTION_ROLE: Readonly<Record<NodeAction, Role>> = {
  INSTALL: 'OPERATOR',
  RETRY_INSTALL: 'OPERATOR',
  CANCEL_INSTALL: 'OPERATOR',
  RECOPY_AGENT: 'OPERATOR',
  UPDATE_CREDENTIALS: 'OPERATOR',
  // Trusting a new host key decides who the service sends credentials to.
  ACCEPT_HOST_KEY: 'ADMIN',
  CLEAN_HOST: 'OPERATOR',
  DELETE_RECORD: 'OPERATOR',
  REMOVE: 'OPERATOR',
  CANCEL_REMOVAL: 'OPERATOR',
  UNCORDON: 'OPERATOR',
};

/** What the rules need to know of a node. */
export interface NodeActionFacts {
  readonly status: NodeStatus;
  readonly origin: NodeOrigin;
  readonly role: string;
  readonly everJoined: boolean;
  readonly unschedulable: boolean;
  readonly offeredHostKeyFingerprint: string | null;
  /** The add-time verdict on leftovers of an earlier membership; null when none was taken. */
  readonly hostVerdict: { readonly verdict: HostVerdictKind; readonly cleanedAt?: string | null } | null;
}

/** A node whose record has reached JOINED once stays "ever joined": its record may then only go once REMOVED. */
export function everJoinedAfter(status: NodeStatus, everJoined: boolean): boolean {
  return everJoined || status === 'JOINED';
}

/** A discovered node was in the cluster when it was found, so it counts as joined. */
export function countsAsJoined(node: Pick<NodeActionFacts, 'origin' | 'everJoined'>): boolean {
  return node.everJoined || node.origin !== 'ADDED';
}

/** Whether the node's record may be deleted outright: the one rule for the API and every client. */
export function mayDeleteRecord(node: Pick<NodeActionFacts, 'status' | 'origin' | 'everJoined'>): boolean {
  return canDeleteRecord(node.status, countsAsJoined(node));
}

/** A node in one of these statuses has a Node object in the cluster, whose readiness means something. */
export function isInCluster(status: NodeStatus): boolean {
  return status === 'JOINED' || status === 'REMOVING' || status === 'DRAIN_FAILED';
}

/** Control-plane nodes are not this service's to change. */
export function isControlPlaneRole(role: string): boolean {
  return (CONTROL_PLANE_ROLES as readonly string[]).includes(role);
}

/**
 * Whether the node's Node may be made schedulable again: after a removal that failed or was
 * cancelled (DRAIN_FAILED), or a JOINED node left cordoned. A running removal must be cancelled first.
 */
export function canUncordon(status: NodeStatus): boolean {
  return UNCORDON_FROM.includes(status);
}

/** The statuses in which a node may be made schedulable again. */
export const UNCORDON_FROM: readonly NodeStatus[] = ['DRAIN_FAILED', 'JOINED'];

/** Whether the cleanup a CLEANABLE verdict lists may run now: once, before the install. */
export function canCleanHost(status: NodeStatus, verdict: NodeActionFacts['hostVerdict']): boolean {
  return status === 'READY_TO_INSTALL' && verdict?.verdict === 'CLEANABLE' && !verdict.cleanedAt;
}

/**
 * Every action the node's state allows now, in `NODE_ACTIONS` order. Nodes found in the
 * cluster rather than added here have no install or SSH access to manage but can be removed.
 * CANCEL_REMOVAL is listed for any REMOVING node; the removal run says whether it still drains.
 */
export function nodeActions(node: NodeActionFacts): NodeAction[] {
  if (isControlPlaneRole(node.role)) {
    return [];
  }
  const { status } = node;
  const added = node.origin === 'ADDED';
  // Reconnecting with the same pinned key would only hit the changed key again.
  const reconnect = added && allowedFrom('RECONNECT_REQUESTED').includes(status) && status !== 'HOST_KEY_CHANGED';
  const allowed: Record<NodeAction, boolean> = {
    INSTALL: added && allowedFrom('INSTALL_STARTED').includes(status) && verdictAllowsInstall(node.hostVerdict),
    RETRY_INSTALL: added && allowedFrom('INSTALL_RETRIED').includes(status),
    CANCEL_INSTALL: added && allowedFrom('INSTALL_CANCELLED').includes(status),
    RECOPY_AGENT: reconnect,
    UPDATE_CREDENTIALS: reconnect,
    ACCEPT_HOST_KEY: added && status === 'HOST_KEY_CHANGED' && node.offeredHostKeyFingerprint !== null,
    CLEAN_HOST: added && canCleanHost(status, node.hostVerdict),
    DELETE_RECORD: mayDeleteRecord(node),
    REMOVE: allowedFrom('REMOVAL_STARTED').includes(status),
    CANCEL_REMOVAL: status === 'REMOVING',
    // Uncordoning a schedulable JOINED node would change nothing.
    UNCORDON: canUncordon(status) && (status === 'DRAIN_FAILED' || node.unschedulable),
  };
  return NODE_ACTIONS.filter((action) => allowed[action]);
}

/** The actions a user holding `role` may ask for, of those `actions` lists. */
export function actionsFor(actions: readonly NodeAction[], role: Role | null): NodeAction[] {
  return role === null ? [] : actions.filter((action) => roleAllows(role, NODE_ACTION_ROLE[action]));
}

/**
 * What an operator should do next with a node: the one decision the API's `nextStep` and the
 * console's "What to do next" both word. On a host ready to install it follows the add-time
 * verdict, as Install does: clean the host first, or reinstall its OS.
 */
export type NextStep = 'INSTALL' | 'CLEAN_HOST' | 'REINSTALL_OS' | 'AUTH_FAILED' | 'UNREACHABLE' | 'HOST_KEY_CHANGED' | 'PRECHECK_FAILED' | 'INSTALL_FAILED' | 'STALLED' | 'DRAIN_FAILED';

export function nextStepOf(node: Pick<NodeActionFacts, 'status' | 'origin' | 'hostVerdict'>): NextStep | null {
  switch (node.status) {
    case 'READY_TO_INSTALL':
      if (node.origin !== 'ADDED') {
        return null;
      }
      if (canCleanHost(node.status, node.hostVerdict)) {
        return 'CLEAN_HOST';
      }
      return verdictAllowsInstall(node.hostVerdict) ? 'INSTALL' : 'REINSTALL_OS';
    case 'AUTH_FAILED':
    case 'UNREACHABLE':
    case 'HOST_KEY_CHANGED':
    case 'PRECHECK_FAILED':
    case 'INSTALL_FAILED':
    case 'STALLED':
    case 'DRAIN_FAILED':
      return node.status;
    default:
      return null;
  }
}

/** The API's words for each next step (they name the GraphQL mutation that does it). */
export const NEXT_STEP_TEXT: Readonly<Record<NextStep, CodedText>> = {
  INSTALL: message('node.next.INSTALL'),
  CLEAN_HOST: message('node.next.CLEAN_HOST'),
  REINSTALL_OS: message('node.next.REINSTALL_OS'),
  AUTH_FAILED: message('node.next.AUTH_FAILED'),
  UNREACHABLE: message('node.next.UNREACHABLE'),
  HOST_KEY_CHANGED: message('node.next.HOST_KEY_CHANGED'),
  PRECHECK_FAILED: message('node.next.PRECHECK_FAILED'),
  INSTALL_FAILED: message('node.next.INSTALL_FAILED'),
  STALLED: message('node.next.STALLED'),
  DRAIN_FAILED: message('node.next.DRAIN_FAILED'),
};
