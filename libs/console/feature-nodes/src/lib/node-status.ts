import type { StatusTone } from '@ccos/console/ui';
import { type HealthState, type HostManifestState, NODE_STATUSES, type NodeStatus } from '@ccos/shared/domain';

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

/** Hosts whose files drifted from their install's record, or that were installed from an older artifact set. */
export const HOST_FILTERS = ['drifted', 'outdated'] as const;
export type HostFilter = (typeof HOST_FILTERS)[number];
const HOST_STATE: Readonly<Record<HostFilter, HostManifestState>> = { drifted: 'DRIFTED', outdated: 'OUTDATED' };

/** A filter value: a family, one exact status, or what the hosts run. */
export type StatusFilter = 'all' | StatusFamily | NodeStatus | HostFilter;

/** What a filter looks at of a node. */
export interface Filtered {
  readonly status: NodeStatus;
  readonly hostState?: HostManifestState | null;
}

export function isStatusFilter(value: string | null | undefined): value is StatusFilter {
  return value === 'all' || [...STATUS_FAMILIES, ...NODE_STATUSES, ...HOST_FILTERS].some((filter) => filter === value);
}

/** How many nodes each status, each family and each host filter has (absent: none), for the filter's options. */
export function statusCounts(nodes: Iterable<Filtered>): ReadonlyMap<StatusFilter, number> {
  const counts = new Map<StatusFilter, number>();
  const count = (filter: StatusFilter) => counts.set(filter, (counts.get(filter) ?? 0) + 1);
  for (const node of nodes) {
    count(node.status);
    count(FAMILY[node.status]);
    HOST_FILTERS.filter((filter) => HOST_STATE[filter] === node.hostState).forEach(count);
  }
  return counts;
}

export function matchesFilter(node: Filtered, filter: StatusFilter): boolean {
  if (filter === 'all') {
    return true;
  }
  if ((HOST_FILTERS as readonly string[]).includes(filter)) {
    return node.hostState === HOST_STATE[filter as HostFilter];
  }
  return (STATUS_FAMILIES as readonly string[]).includes(filter) ? FAMILY[node.status] === filter : node.status === filter;
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
