import type { FileDrift, ManifestFile } from './host-manifest';
import { INSTALL_STEPS, type InstallStep } from './install-steps';

/**
 * Rolling operations over a cluster's joined nodes: one node at a time or a few, never more
 * unavailable than the budget allows, each node cordoned, drained (PodDisruptionBudgets honoured),
 * acted on, brought back Ready and uncordoned.
 *
 * REBOOT reboots each host. UPGRADE brings each host to the cluster's artifact set and REAPPLY
 * restores the files found drifted: the agent re-runs, on the joined host, only the install steps
 * whose inputs changed (see {@link applySteps}).
 */
export const ROLLOUT_KINDS = ['REBOOT', 'UPGRADE', 'REAPPLY'] as const;
export type RolloutKind = (typeof ROLLOUT_KINDS)[number];
/** The kinds whose nodes the agent works on (an apply run), not a reboot. */
export type ApplyKind = Exclude<RolloutKind, 'REBOOT'>;

export function isApplyKind(kind: RolloutKind): kind is ApplyKind {
  return kind !== 'REBOOT';
}

/**
 * RUNNING: nodes start as the budget and the window allow. PAUSED: nothing new starts and a node
 * in progress stops at its next phase (an operator's pause, a PodDisruptionBudget that allows no
 * disruption, a failed node); resumed, it goes on where it was. CANCELLED: nothing new starts; a
 * node still draining is uncordoned and skipped, one already rebooting is brought back first.
 */
export const ROLLOUT_STATUSES = ['RUNNING', 'PAUSED', 'SUCCEEDED', 'CANCELLED'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/**
 * Where a node of a rollout is, in order. DRAIN cordons first; then APPLY (the agent's apply run)
 * or REBOOT; WAIT_READY waits for the kubelet and the Node's Ready (after a reboot: of the new boot).
 */
export const ROLLOUT_NODE_PHASES = ['PENDING', 'DRAIN', 'APPLY', 'REBOOT', 'WAIT_READY', 'UNCORDON', 'DONE', 'SKIPPED'] as const;
export type RolloutNodePhase = (typeof ROLLOUT_NODE_PHASES)[number];

/** Phases during which the rollout holds the node out of service (cordoned, draining, rebooting). */
export const ROLLOUT_ACTIVE_PHASES: ReadonlySet<RolloutNodePhase> = new Set(['DRAIN', 'APPLY', 'REBOOT', 'WAIT_READY', 'UNCORDON']);

/** What a drained node goes through next: its reboot, or its apply run. */
export function phaseAfterDrain(kind: RolloutKind): 'APPLY' | 'REBOOT' {
  return isApplyKind(kind) ? 'APPLY' : 'REBOOT';
}

/** The steps that lay down the artifact set's own files: binaries, rpms, units. */
const SET_STEPS: readonly InstallStep[] = ['DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES'];

/**
 * The install steps an apply run re-runs on a joined host, in install order. An UPGRADE starts at
 * the steps that lay down the artifact set (each keeps what already matches the new set: a binary
 * with the right hash, an rpm installed, a unit with the same content); a REAPPLY at the first step
 * that wrote a drifted file. From there on, every later step that wrote a file the record holds
 * runs too, since a later step may have written over what an earlier one writes (Ignition's
 * kubelet.service over the set's): re-running only the earlier one would undo the later one's
 * work. INSTALL_PACKAGES, which records no files, runs only in an UPGRADE; START_KUBELET always
 * runs last and restarts kubelet on what was written (never PREFLIGHT: the host is a node
 * already). A drifted file START_KUBELET wrote (the bootstrap kubeconfig) is not written again: a
 * joined node has its own certificates.
 */
export function applySteps(kind: ApplyKind, files: readonly ManifestFile[], drift: readonly FileDrift[]): InstallStep[] {
  const stepOf = new Map(files.map((file) => [file.path, file.step]));
  const writers = new Set(files.map((file) => file.step));
  const needed = new Set<InstallStep>(kind === 'UPGRADE' ? SET_STEPS : []);
  for (const changed of drift) {
    const step = stepOf.get(changed.path);
    if (step !== undefined && step !== 'PREFLIGHT' && step !== 'START_KUBELET') {
      needed.add(step);
    }
  }
  const first = Math.min(...[...needed].map((step) => INSTALL_STEPS.indexOf(step)));
  return INSTALL_STEPS.filter((step, index) =>
    step === 'START_KUBELET' || needed.has(step) || (index > first && step !== 'INSTALL_PACKAGES' && step !== 'PREFLIGHT' && writers.has(step)));
}

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
