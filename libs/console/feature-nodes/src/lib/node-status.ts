import type { StatusTone } from '@ccos/console/ui';
import { type HealthState, NODE_STATUSES, type NodeStatus } from '@ccos/shared/domain';

/** Statuses grouped the way an operator scans a list: what needs them, what is moving, what is done. */
export const STATUS_FAMILIES = ['attention', 'progress', 'ready', 'joined', 'removed'] as const;
export type StatusFamily = (typeof STATUS_FAMILIES)[number];

const FAMILY: Readonly<Record<NodeStatus, StatusFamily>> = {
  ADDING: 'progress',
  READY_TO_INSTALL: 'ready',
  AUTH_FAILED: 'attention',
  UNREACHABLE: 'attention',
  HOST_KEY_CHANGED: 'attention',
  PRECHECK_FAILED: 'attention',
  INSTALLING: 'progress',
  INSTALL_FAILED: 'attention',
  STALLED: 'attention',
  JOINED: 'joined',
  REMOVING: 'progress',
  DRAIN_FAILED: 'attention',
  REMOVED: 'removed',
};

/** Stalled and drain-failed nodes may still recover or stay usable: amber, not red. */
const WARNINGS: ReadonlySet<NodeStatus> = new Set<NodeStatus>(['STALLED', 'DRAIN_FAILED']);

export function statusFamily(status: NodeStatus): StatusFamily {
  return FAMILY[status];
}

/** The badge colour of a status, by its family. */
export function statusTone(status: NodeStatus): StatusTone {
  if (WARNINGS.has(status)) {
    return 'warn';
  }
  const tones: Readonly<Record<StatusFamily, StatusTone>> = { attention: 'error', progress: 'info', ready: 'ok', joined: 'ok', removed: 'neutral' };
  return tones[FAMILY[status]];
}

/** A filter value: a family, or one exact status. */
export type StatusFilter = 'all' | StatusFamily | NodeStatus;

export function isStatusFilter(value: string | null | undefined): value is StatusFilter {
  return value === 'all' || (STATUS_FAMILIES as readonly string[]).includes(value ?? '') || (NODE_STATUSES as readonly string[]).includes(value ?? '');
}

/** How many nodes each status and each family has (absent: none), for the filter's options. */
export function statusCounts(statuses: Iterable<NodeStatus>): ReadonlyMap<StatusFilter, number> {
  const counts = new Map<StatusFilter, number>();
  for (const status of statuses) {
    counts.set(status, (counts.get(status) ?? 0) + 1);
    const family = FAMILY[status];
    counts.set(family, (counts.get(family) ?? 0) + 1);
  }
  return counts;
}

export function matchesFilter(status: NodeStatus, filter: StatusFilter): boolean {
  if (filter === 'all') {
    return true;
  }
  return (STATUS_FAMILIES as readonly string[]).includes(filter) ? FAMILY[status] === filter : status === filter;
}

/**
 * Whether the service says the node's kubelet waits for an operator to approve its CSRs
 * (`node.waitingForCsrs`, from the install's START_KUBELET step): its views link to the certificates page.
 */
export function waitsForCsrApproval(node: { readonly statusReasonCode?: string | null }): boolean {
  return node.statusReasonCode === 'node.waitingForCsrs';
}

const HEALTH_TONES: Readonly<Record<HealthState, StatusTone>> = { HEALTHY: 'ok', UNHEALTHY: 'error', UNKNOWN: 'neutral' };

/** A member node's health as a badge's tone. */
export function healthTone(state: HealthState): StatusTone {
  return HEALTH_TONES[state];
}
