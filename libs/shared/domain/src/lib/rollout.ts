/**
 * Rolling operations over a cluster's joined nodes: one node at a time or a few, never more
 * unavailable than the budget allows, each node cordoned, drained (PodDisruptionBudgets honoured),
 * acted on, brought back Ready and uncordoned.
 *
 * REBOOT is the kind there is today; UPGRADE and REAPPLY (the agent re-running the steps whose
 * inputs changed) come with the agent's apply mode.
 */
export const ROLLOUT_KINDS = ['REBOOT'] as const;
export type RolloutKind = (typeof ROLLOUT_KINDS)[number];

/**
 * RUNNING: nodes start as the budget and the window allow. PAUSED: nothing new starts and a node
 * in progress stops at its next phase (an operator's pause, a PodDisruptionBudget that allows no
 * disruption, a failed node); resumed, it goes on where it was. CANCELLED: nothing new starts; a
 * node still draining is uncordoned and skipped, one already rebooting is brought back first.
 */
export const ROLLOUT_STATUSES = ['RUNNING', 'PAUSED', 'SUCCEEDED', 'CANCELLED'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/** Where a node of a rollout is, in order. DRAIN cordons first; WAIT_READY waits for the new boot, the kubelet and the Node's Ready. */
export const ROLLOUT_NODE_PHASES = ['PENDING', 'DRAIN', 'REBOOT', 'WAIT_READY', 'UNCORDON', 'DONE', 'SKIPPED'] as const;
export type RolloutNodePhase = (typeof ROLLOUT_NODE_PHASES)[number];

/** Phases during which the rollout holds the node out of service (cordoned, draining, rebooting). */
export const ROLLOUT_ACTIVE_PHASES: ReadonlySet<RolloutNodePhase> = new Set(['DRAIN', 'REBOOT', 'WAIT_READY', 'UNCORDON']);

export function rolloutFinished(status: RolloutStatus): boolean {
  return status === 'SUCCEEDED' || status === 'CANCELLED';
}

/** At most this many of the rollout's nodes unavailable at once: a count, or a percentage of them. */
export interface RolloutBudget {
  readonly maxUnavailable: number;
  readonly isPercent: boolean;
}

/**
 * The budget as a count of nodes: a percentage is of the rollout's nodes, rounded down but at least
 * one (a rollout that could never start a node would wait forever).
 */
export function allowedUnavailable(budget: RolloutBudget, nodes: number): number {
  if (!budget.isPercent) {
    return budget.maxUnavailable;
  }
  return budget.maxUnavailable <= 0 ? 0 : Math.max(1, Math.floor((nodes * budget.maxUnavailable) / 100));
}

/** A node of a rollout as the planner sees it: its phase, and what the cluster says of it. */
export interface RolloutMember {
  readonly nodeId: string;
  readonly phase: RolloutNodePhase;
  /** The Node's Ready condition is True. */
  readonly ready: boolean;
  /** Cordoned (`spec.unschedulable`). */
  readonly unschedulable: boolean;
  /** Remediation is working on it (a rung running or waiting to work): unavailable, and not started until it is over. */
  readonly remediating?: boolean;
}

export interface RolloutPlan {
  /** Nodes to start now, in the rollout's order. */
  readonly start: readonly string[];
  /** Nodes unavailable now: in an active phase, or NotReady or cordoned by anyone. */
  readonly unavailable: readonly string[];
  readonly allowed: number;
  /** Every node is done or skipped. */
  readonly finished: boolean;
}

/**
 * Which pending nodes start now. Nodes the rollout holds count against the budget, and so do nodes
 * that are NotReady or cordoned for any other reason (a node that went down by itself uses the
 * budget as much as one the rollout took down). Nodes start in the rollout's order.
 */
export function planRollout(budget: RolloutBudget, members: readonly RolloutMember[]): RolloutPlan {
  const allowed = allowedUnavailable(budget, members.length);
  const unavailable = members
    .filter((member) => ROLLOUT_ACTIVE_PHASES.has(member.phase) || (member.phase !== 'SKIPPED' && (!member.ready || member.unschedulable || member.remediating === true)))
    .map((member) => member.nodeId);
  const slots = Math.max(0, allowed - unavailable.length);
  const start = members
    .filter((member) => member.phase === 'PENDING' && member.ready && !member.unschedulable && member.remediating !== true)
    .slice(0, slots)
    .map((member) => member.nodeId);
  const finished = members.every((member) => member.phase === 'DONE' || member.phase === 'SKIPPED');
  return { start, unavailable, allowed, finished };
}
