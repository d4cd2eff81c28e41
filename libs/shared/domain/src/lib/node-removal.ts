import { type CodedText, type MessageCode, type MessageParams, message } from '@ccos/shared/messages';

/**
 * Removing a node (seed design, "如何移除节点"): cordon, drain, delete the Node object — plus
 * what a removal must do beyond kubectl (stop the kubelet first, deny its leftover CSRs,
 * revoke its agent tokens). The rules here decide whether a removal may start and in which
 * order a run goes; the API executes them.
 */

export const REMOVAL_RUN_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type RemovalRunStatus = (typeof REMOVAL_RUN_STATUSES)[number];

/**
 * The phases of a run, in order. The Node object is deleted only after the drain finished
 * and the kubelet was stopped (a running kubelet registers its Node again).
 */
export const REMOVAL_PHASES = ['DRAIN', 'STOP_KUBELET', 'DELETE_NODE', 'DENY_CSRS', 'REVOKE_TOKENS', 'CLEAN_HOST', 'DONE'] as const;
export type RemovalPhase = (typeof REMOVAL_PHASES)[number];

/** What a removal run records, in the order things happen. */
export const REMOVAL_EVENT_KINDS = [
  'STARTED',
  /** The service restarted and picked the run up again. */
  'RESUMED',
  'CORDONED',
  /** Left on the node on purpose (DaemonSet, mirror pod). */
  'POD_SKIPPED',
  /** The Eviction API accepted the eviction; the pod terminates. */
  'POD_EVICTED',
  /** A PodDisruptionBudget refused the eviction (429); retried. */
  'POD_BLOCKED',
  /** The pod is gone. */
  'POD_DELETED',
  /** Deleted with grace period 0 without eviction (ungraceful removal of a dead host). */
  'POD_FORCE_DELETED',
  'POD_FAILED',
  'DRAIN_FINISHED',
  'DRAIN_FAILED',
  'CANCEL_REQUESTED',
  'KUBELET_STOPPED',
  /** The kubelet could not be or need not be stopped (no SSH access, host unreachable, not installed). */
  'KUBELET_NOT_STOPPED',
  /** The host does not answer over SSH: the run waits for it (its blocker says since when). */
  'HOST_WAITING',
  /** An operator had the run go on without its host: the node is marked reinstall required. */
  'HOST_SKIPPED',
  'NODE_DELETED',
  'NODE_NOT_DELETED',
  'CSRS_DENIED',
  'TOKENS_REVOKED',
  'HOST_CLEANED',
  'HOST_NOT_CLEANED',
  'FINISHED',
] as const;
export type RemovalEventKind = (typeof REMOVAL_EVENT_KINDS)[number];

/** Options of a removal; the drain options are named after `kubectl drain`'s flags. */
export interface RemovalOptions {
  /** Also evict pods without a controller and pods of a DaemonSet that is gone (`--force`). */
  readonly force: boolean;
  /** Also evict pods with emptyDir volumes (`--delete-emptydir-data`, the seed's `--delete-local-data`). */
  readonly deleteEmptyDirData: boolean;
  /** Leave DaemonSet pods instead of refusing (`--ignore-daemonsets`). */
  readonly ignoreDaemonSets: boolean;
  /** -1 = each pod's own (`--grace-period`). */
  readonly gracePeriodSeconds: number;
  /** 0 = wait for the drain as long as it takes (`--timeout`). */
  readonly timeoutSeconds: number;
  /** Allow removing the last schedulable Ready worker. */
  readonly allowLastWorker: boolean;
  /** The host is dead: delete its pods with grace 0 instead of waiting for evictions. Needs confirmHostname; refused for a Ready node. */
  readonly ungraceful: boolean;
  /** The node's name, typed by the operator. */
  readonly confirmHostname: string | null;
  /** Remove what the agent installed on the host, so it cannot silently rejoin. */
  readonly cleanHost: boolean;
}

/** kubectl drain's defaults. */
export const DEFAULT_REMOVAL_OPTIONS: RemovalOptions = {
  force: false,
  deleteEmptyDirData: false,
  ignoreDaemonSets: false,
  gracePeriodSeconds: -1,
  // No drain waits forever unless asked to (0): a budget that never allows a disruption ends the run after an hour, the node cordoned.
  timeoutSeconds: 3600,
  allowLastWorker: false,
  ungraceful: false,
  confirmHostname: null,
  cleanHost: false,
};

/** Longest drain timeout accepted (a day); 0 means no timeout. */
export const MAX_REMOVAL_TIMEOUT_SECONDS = 86_400;

/** A problem with the options (`field problem`), or null. */
export function checkRemovalOptions(options: RemovalOptions): { field: string; problem: CodedText } | null {
  if (!Number.isInteger(options.gracePeriodSeconds) || options.gracePeriodSeconds < -1) {
    return { field: 'gracePeriodSeconds', problem: message('removal.option.gracePeriod') };
  }
  if (!Number.isInteger(options.timeoutSeconds) || options.timeoutSeconds < 0 || options.timeoutSeconds > MAX_REMOVAL_TIMEOUT_SECONDS) {
    return { field: 'timeoutSeconds', problem: message('removal.option.timeout', { max: MAX_REMOVAL_TIMEOUT_SECONDS }) };
  }
  return null;
}

/** What the rules need to know about a Node of the cluster. */
export interface RemovalNodeFacts {
  readonly name: string;
  /** From `node-role.kubernetes.io/<role>` labels. */
  readonly roles: readonly string[];
  /** Taints with a control-plane key. */
  readonly controlPlaneTaints: readonly { readonly key: string }[];
  readonly ready: boolean;
  /** The Ready condition's status. */
  readonly readyStatus: string;
  readonly unschedulable: boolean;
}

export const CONTROL_PLANE_ROLES = ['control-plane', 'master'] as const;

export function isControlPlane(node: RemovalNodeFacts): boolean {
  return node.roles.some((role) => (CONTROL_PLANE_ROLES as readonly string[]).includes(role)) || node.controlPlaneTaints.length > 0;
}

/** The node's role for the inventory: control-plane wins, then worker, then any other role. */
export function inventoryRole(node: RemovalNodeFacts): string {
  const controlPlane = CONTROL_PLANE_ROLES.find((role) => node.roles.includes(role));
  if (controlPlane) {
    return controlPlane;
  }
  if (node.controlPlaneTaints.length > 0) {
    return 'control-plane';
  }
  return node.roles.includes('worker') ? 'worker' : (node.roles[0] ?? 'worker');
}

/** A worker that can take pods now. */
export function isSchedulableReadyWorker(node: RemovalNodeFacts): boolean {
  return node.ready && !node.unschedulable && !isControlPlane(node);
}

export const SAFETY_RULES = ['CONTROL_PLANE', 'LAST_WORKER', 'UNGRACEFUL_NEEDS_DEAD_NODE', 'CONFIRM_HOSTNAME', 'NODE_NOT_READY'] as const;
export type SafetyRule = (typeof SAFETY_RULES)[number];

/** One rule's verdict. A failed blocking check refuses the removal; a failed advisory one is a warning. */
export interface SafetyCheck {
  readonly rule: SafetyRule;
  readonly passed: boolean;
  readonly blocking: boolean;
  readonly message: string;
  /** `message` by its code in the message catalogue, and its parameters. */
  readonly messageCode: MessageCode;
  readonly messageParams: MessageParams;
}

export interface SafetyVerdict {
  /** No blocking check failed. */
  readonly allowed: boolean;
  readonly checks: readonly SafetyCheck[];
  /** The failed blocking checks' messages, joined; null when allowed. */
  readonly refusal: string | null;
  /** `refusal` as a coded message (a list of the failed checks' messages). */
  readonly refusalCoded: CodedText | null;
}

/**
 * Whether `target` may be removed with `options`, given the cluster's other Nodes: never a
 * control-plane node; the last schedulable Ready worker only with allowLastWorker; ungraceful
 * only for a node that is not Ready and with its name typed again.
 */
export function removalSafety(target: RemovalNodeFacts, others: readonly RemovalNodeFacts[], options: RemovalOptions): SafetyVerdict {
  const checks: SafetyCheck[] = [];
  const controlPlane = isControlPlane(target);
  checks.push({
    rule: 'CONTROL_PLANE',
    passed: !controlPlane,
    blocking: true,
    ...coded(
      controlPlane
        ? message('removal.safety.controlPlane', { node: target.name, marks: [...target.roles, ...target.controlPlaneTaints.map((taint) => `taint ${taint.key}`)].join(', ') })
        : message('removal.safety.notControlPlane', { node: target.name }),
    ),
  });
  const remaining = others.filter((node) => node.name !== target.name && isSchedulableReadyWorker(node));
  checks.push({
    rule: 'LAST_WORKER',
    passed: remaining.length > 0 || options.allowLastWorker,
    blocking: true,
    ...coded(
      remaining.length > 0
        ? message('removal.safety.workersRemain', {
            count: remaining.length,
            nodes: `${remaining
              .slice(0, 5)
              .map((node) => node.name)
              .join(', ')}${remaining.length > 5 ? ', …' : ''}`,
          })
        : options.allowLastWorker
          ? message('removal.safety.lastWorkerAllowed')
          : message('removal.safety.lastWorker'),
    ),
  });
  if (options.ungraceful) {
    checks.push({
      rule: 'UNGRACEFUL_NEEDS_DEAD_NODE',
      passed: !target.ready,
      blocking: true,
      ...coded(
        target.ready
          ? message('removal.safety.ungracefulReady', { node: target.name })
          : message('removal.safety.ungracefulNotReady', { node: target.name, readyStatus: target.readyStatus }),
      ),
    });
  } else if (!target.ready) {
    checks.push({
      rule: 'NODE_NOT_READY',
      passed: false,
      blocking: false,
      ...coded(message('removal.safety.notReady', { node: target.name, readyStatus: target.readyStatus })),
    });
  }
  if (options.ungraceful || options.confirmHostname !== null) {
    const typed = options.confirmHostname;
    checks.push({
      rule: 'CONFIRM_HOSTNAME',
      passed: typed === target.name,
      blocking: true,
      ...coded(
        typed === target.name
          ? message('removal.safety.confirmed')
          : typed === null
            ? message('removal.safety.confirmNeeded', { node: target.name })
            : message('removal.safety.confirmWrong', { typed, node: target.name }),
      ),
    });
  }
  const failed = checks.filter((check) => check.blocking && !check.passed);
  const refusal = failed.length === 0 ? null : message('common.list', { items: failed.map((check) => ({ code: check.messageCode, params: check.messageParams })) });
  return { allowed: failed.length === 0, checks, refusal: refusal?.message ?? null, refusalCoded: refusal };
}

/** A check's message fields from a coded message. */
function coded(text: CodedText): Pick<SafetyCheck, 'message' | 'messageCode' | 'messageParams'> {
  return { message: text.message, messageCode: text.code, messageParams: text.params };
}

/** The phase after `phase` in a run; cleaning the host is skipped unless asked for. */
export function nextRemovalPhase(phase: RemovalPhase, cleanHost: boolean): RemovalPhase {
  const next = REMOVAL_PHASES[Math.min(REMOVAL_PHASES.indexOf(phase) + 1, REMOVAL_PHASES.length - 1)];
  return next === 'CLEAN_HOST' && !cleanHost ? 'DONE' : next;
}

/** Whether a run in `phase` can still be cancelled: only while it drains (the Node is not touched afterwards). */
export function removalCancellable(phase: RemovalPhase): boolean {
  return phase === 'DRAIN';
}
