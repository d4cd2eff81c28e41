import { type CodedText, message } from '@ccos/shared/messages';
import type { NodeStatus } from './node-lifecycle';

export const HEALTH_STATES = ['HEALTHY', 'UNHEALTHY', 'UNKNOWN'] as const;
/** HEALTHY: Ready and, as far as last checked, the host answers with its kubelet active. UNKNOWN: not seen in the cluster yet. */
export type HealthState = (typeof HEALTH_STATES)[number];

export const HEALTH_PROBLEMS = ['NOT_READY', 'READY_UNKNOWN', 'HOST_UNREACHABLE', 'KUBELET_INACTIVE'] as const;
export type HealthProblemKind = (typeof HEALTH_PROBLEMS)[number];

/** The host side of a node's health: its last check over SSH. */
export interface HostHealthCheck {
  /** ISO 8601. */
  readonly checkedAt: string;
  readonly reachable: boolean;
  /** `systemctl is-active kubelet` said active; null when the host was not reached. */
  readonly kubeletActive: boolean | null;
  /** Why it was not reached, or what systemctl said. */
  readonly reason: CodedText | null;
}

/** What a node's health is judged from. */
export interface HealthInputs {
  readonly status: NodeStatus;
  /** The Ready condition of its Node; null while the cluster has not shown one. */
  readonly readyStatus: 'True' | 'False' | 'Unknown' | null;
  /** When the Ready condition last changed. */
  readonly readySince: Date | null;
  readonly hostHealth: HostHealthCheck | null;
}

export interface HealthProblem {
  readonly kind: HealthProblemKind;
  /** Since when, as far as known. */
  readonly since: Date | null;
  readonly text: CodedText;
}

export interface NodeHealth {
  readonly state: HealthState;
  /** When the state began, as far as known: the Ready condition's last change, or the host check that found it. */
  readonly since: Date | null;
  readonly problems: readonly HealthProblem[];
}

/** Statuses of nodes that are members of the cluster, whose health is watched. */
const MEMBER_STATUSES: ReadonlySet<NodeStatus> = new Set(['JOINED', 'DRAIN_FAILED', 'REMOVING']);

/**
 * A member node's health, from its cluster (the Ready condition: False, or Unknown when the
 * kubelet stopped reporting, as the node lifecycle controller marks it) and from its host (the
 * last SSH check: unreachable, or the kubelet unit not active); null for a node that is not a
 * member (being added, installed or removed for good), whose progress its status tells.
 */
export function nodeHealth(node: HealthInputs): NodeHealth | null {
  if (!MEMBER_STATUSES.has(node.status)) {
    return null;
  }
  const problems: HealthProblem[] = [];
  if (node.readyStatus === 'False') {
    problems.push({ kind: 'NOT_READY', since: node.readySince, text: message('health.notReady') });
  } else if (node.readyStatus === 'Unknown') {
    problems.push({ kind: 'READY_UNKNOWN', since: node.readySince, text: message('health.readyUnknown') });
  }
  const host = node.hostHealth;
  if (host && !host.reachable) {
    problems.push({ kind: 'HOST_UNREACHABLE', since: new Date(host.checkedAt), text: message('health.hostUnreachable', { reason: host.reason ?? '' }) });
  } else if (host?.kubeletActive === false) {
    problems.push({ kind: 'KUBELET_INACTIVE', since: new Date(host.checkedAt), text: message('health.kubeletInactive', { reason: host.reason ?? '' }) });
  }
  if (problems.length > 0) {
    const times = problems.map((problem) => problem.since?.getTime()).filter((time): time is number => time !== undefined);
    return { state: 'UNHEALTHY', since: times.length > 0 ? new Date(Math.min(...times)) : null, problems };
  }
  if (node.readyStatus === null) {
    return { state: 'UNKNOWN', since: null, problems };
  }
  return { state: 'HEALTHY', since: node.readySince, problems };
}
