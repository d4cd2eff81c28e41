import { type CodedText, type Message, message } from '@ccos/shared/messages';

/**
 * The node lifecycle: the only place that decides which status change is allowed.
 *
 * ADDING → READY_TO_INSTALL → INSTALLING → JOINED, with failure states on the way
 * (each carries a reason and a next step), then REMOVING → REMOVED or DRAIN_FAILED.
 */
export const NODE_STATUSES = [
  'ADDING',
  'READY_TO_INSTALL',
  'AUTH_FAILED',
  'UNREACHABLE',
  'HOST_KEY_CHANGED',
  'PRECHECK_FAILED',
  'INSTALLING',
  'INSTALL_FAILED',
  'STALLED',
  'JOINED',
  'REMOVING',
  'DRAIN_FAILED',
  'REMOVED',
] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export const NODE_EVENTS = [
  'AGENT_COPIED',
  'SSH_AUTH_FAILED',
  'SSH_UNREACHABLE',
  'HOST_KEY_MISMATCH',
  'PRECHECK_FAILED',
  'RECONNECT_REQUESTED',
  'INSTALL_STARTED',
  'INSTALL_FAILED',
  'INSTALL_CANCELLED',
  'INSTALL_RETRIED',
  'AGENT_SILENT',
  'AGENT_HEARD',
  'NODE_READY',
  'REMOVAL_STARTED',
  'DRAIN_FAILED',
  'REMOVAL_SUCCEEDED',
  'UNCORDONED',
  'NODE_VANISHED',
  'HOST_ADDED_AGAIN',
] as const;
export type NodeEvent = (typeof NODE_EVENTS)[number];

/** Where a node may come from: entered through addNode, or found in the cluster. */
export type NodeOrigin = 'ADDED' | 'DISCOVERED';

const SSH_PROBLEMS: readonly NodeStatus[] = ['AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED'];

interface TransitionRule {
  readonly from: readonly NodeStatus[];
  readonly to: NodeStatus;
}

/** Every allowed transition, keyed by the event that causes it. */
export const NODE_TRANSITIONS: Readonly<Record<NodeEvent, TransitionRule>> = {
  AGENT_COPIED: { from: ['ADDING'], to: 'READY_TO_INSTALL' },
  SSH_AUTH_FAILED: { from: ['ADDING', 'INSTALLING', 'STALLED'], to: 'AUTH_FAILED' },
  SSH_UNREACHABLE: { from: ['ADDING'], to: 'UNREACHABLE' },
  HOST_KEY_MISMATCH: { from: ['ADDING', 'READY_TO_INSTALL', 'INSTALLING', 'STALLED', 'INSTALL_FAILED'], to: 'HOST_KEY_CHANGED' },
  PRECHECK_FAILED: { from: ['ADDING'], to: 'PRECHECK_FAILED' },
  // New credentials, an accepted host key or a re-copy of the agent start the add flow again.
  RECONNECT_REQUESTED: { from: ['READY_TO_INSTALL', 'INSTALL_FAILED', ...SSH_PROBLEMS], to: 'ADDING' },
  INSTALL_STARTED: { from: ['READY_TO_INSTALL'], to: 'INSTALLING' },
  INSTALL_FAILED: { from: ['INSTALLING', 'STALLED'], to: 'INSTALL_FAILED' },
  INSTALL_CANCELLED: { from: ['INSTALLING', 'STALLED'], to: 'INSTALL_FAILED' },
  INSTALL_RETRIED: { from: ['INSTALL_FAILED', 'STALLED'], to: 'INSTALLING' },
  AGENT_SILENT: { from: ['INSTALLING'], to: 'STALLED' },
  AGENT_HEARD: { from: ['STALLED'], to: 'INSTALLING' },
  NODE_READY: { from: ['INSTALLING', 'STALLED'], to: 'JOINED' },
  REMOVAL_STARTED: { from: ['JOINED', 'DRAIN_FAILED'], to: 'REMOVING' },
  DRAIN_FAILED: { from: ['REMOVING'], to: 'DRAIN_FAILED' },
  REMOVAL_SUCCEEDED: { from: ['REMOVING'], to: 'REMOVED' },
  UNCORDONED: { from: ['DRAIN_FAILED', 'REMOVING'], to: 'JOINED' },
  // The Node object disappeared from the cluster without a removal run of ours.
  NODE_VANISHED: { from: ['JOINED', 'DRAIN_FAILED'], to: 'REMOVED' },
  // A Node found in the cluster (a DISCOVERED record) whose host an operator adds: the added
  // record takes the name, and the Node becomes one of the host's leftovers in its verdict.
  HOST_ADDED_AGAIN: { from: ['JOINED'], to: 'REMOVED' },
};

export type TransitionResult =
  | { readonly ok: true; readonly to: NodeStatus }
  | { readonly ok: false; readonly reason: CodedText };

/** Decides whether `event` may happen to a node in `status`, and where it leads. */
export function transition(status: NodeStatus, event: NodeEvent): TransitionResult {
  const rule = NODE_TRANSITIONS[event];
  if (rule.from.includes(status)) {
    return { ok: true, to: rule.to };
  }
  return {
    ok: false,
    reason: message('node.transitionRefused', { event: eventText(event), status: statusText(status), needs: rule.from.map(statusText) }),
  };
}

/** The statuses from which `event` is allowed. */
export function allowedFrom(event: NodeEvent): readonly NodeStatus[] {
  return NODE_TRANSITIONS[event].from;
}

/** Nodes that never joined the cluster may have their record deleted outright. */
export function canDeleteRecord(status: NodeStatus, everJoined: boolean): boolean {
  if (everJoined) {
    return status === 'REMOVED';
  }
  return status !== 'INSTALLING' && status !== 'REMOVING';
}

/** A node in one of these statuses is still on its way into the cluster or in it. */
export function isActive(status: NodeStatus): boolean {
  return status !== 'REMOVED';
}


/** A status as a message parameter: its name in English (as the API spells it), its words in other languages. */
export function statusText(status: NodeStatus): Message {
  return { code: 'node.statusName', params: { status } };
}

/** An event as a message parameter: what happens, in words (`removal started`). */
export function eventText(event: NodeEvent): Message {
  return { code: 'node.eventName', params: { event } };
}
