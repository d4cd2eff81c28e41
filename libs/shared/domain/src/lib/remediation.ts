import type { HealthState } from './node-health';

/**
 * What is tried, in order, on a member that stays unhealthy: each only if the one before did not
 * bring it back. REPLACE (remove the member safely, install a spare of its node group in its
 * place) only for a member of a node group that has a spare.
 */
export const REMEDIATION_RUNGS = ['RESTART_KUBELET', 'REBOOT', 'REPLACE'] as const;
export type RemediationRung = (typeof REMEDIATION_RUNGS)[number];

/** A cluster's remediation policy (off by default; an ADMIN sets it). */
export interface RemediationPolicy {
  readonly enabled: boolean;
  /** Remediation holds its ladder (nothing new starts) until resumed; recoveries are still recorded. */
  readonly paused: boolean;
  /** How long a member must be unhealthy before the first rung. */
  readonly unhealthySeconds: number;
  /** How long a rung may take to bring the member back before the next one. */
  readonly rungTimeoutSeconds: number;
  /** Above this many unhealthy members (those under remediation counted) nothing is remediated. */
  readonly maxUnhealthy: number;
  /** `maxUnhealthy` is a percentage of the members rather than a count. */
  readonly maxUnhealthyIsPercent: boolean;
}

export const DEFAULT_REMEDIATION_POLICY: RemediationPolicy = {
  enabled: false,
  paused: false,
  unhealthySeconds: 300,
  rungTimeoutSeconds: 300,
  maxUnhealthy: 1,
  maxUnhealthyIsPercent: false,
};

/** A member's remediation in progress: the rung it is at and until when that rung has to work. */
export interface NodeRemediation {
  readonly rung: RemediationRung;
  /** ISO 8601. */
  readonly startedAt: string;
  /** ISO 8601: past it, a member still unhealthy goes to the next rung. */
  readonly deadline: string;
  /** Every rung tried, in order. */
  readonly rungs: readonly RemediationRung[];
  /** Every rung was tried and the member is still unhealthy: an operator has to look. */
  readonly exhausted: boolean;
}

export interface RemediationMember {
  readonly id: string;
  /** Its health state and since when; null when not judged (not a member). */
  readonly health: { readonly state: HealthState; readonly since: Date | null } | null;
  readonly remediation: NodeRemediation | null;
  /** A member of a node group with a spare to put in its place (the REPLACE rung). */
  readonly replaceable?: boolean;
  /**
   * A rollout has it out of service on purpose (draining, rebooting, waiting for it to come back):
   * its NotReady is expected, so no rung starts or escalates on it and it does not count towards
   * the cap. A rollout that stops on it (a problem recorded) hands it back.
   */
  readonly inMaintenance?: boolean;
}

/** Remediation held by the cap: so many members are unhealthy that the cause is likely not the nodes. */
export interface RemediationHold {
  readonly unhealthy: number;
  readonly members: number;
  readonly cap: number;
}

export type RemediationStep =
  | { readonly kind: 'START'; readonly nodeId: string; readonly rung: RemediationRung }
  | { readonly kind: 'ESCALATE'; readonly nodeId: string; readonly rung: RemediationRung }
  | { readonly kind: 'EXHAUSTED'; readonly nodeId: string }
  | { readonly kind: 'RECOVERED'; readonly nodeId: string };

/** The most members that may be unhealthy for remediation to act. */
export function remediationCap(policy: RemediationPolicy, members: number): number {
  return policy.maxUnhealthyIsPercent ? Math.floor((members * policy.maxUnhealthy) / 100) : policy.maxUnhealthy;
}

/**
 * What remediation does now in a cluster: members under remediation that are healthy again are
 * recovered (always); unless the policy is off or paused, or more members are unhealthy than the
 * cap allows (then it is held and says so), a member (not in a rollout's maintenance) unhealthy for `unhealthySeconds` starts at
 * the first rung, and one whose rung's deadline passed moves to the next, or is exhausted.
 */
export function planRemediation(policy: RemediationPolicy, members: readonly RemediationMember[], now: Date): { held: RemediationHold | null; steps: RemediationStep[] } {
  const steps: RemediationStep[] = [];
  const judged = members.filter((member) => member.health !== null);
  for (const member of judged) {
    if (member.remediation && member.health?.state === 'HEALTHY') {
      steps.push({ kind: 'RECOVERED', nodeId: member.id });
    }
  }
  const unhealthy = judged.filter((member) => member.inMaintenance !== true && (member.health?.state === 'UNHEALTHY' || (member.remediation !== null && member.health?.state !== 'HEALTHY')));
  const cap = remediationCap(policy, judged.length);
  if (!policy.enabled || policy.paused) {
    return { held: null, steps };
  }
  if (unhealthy.length > cap) {
    return { held: { unhealthy: unhealthy.length, members: judged.length, cap }, steps };
  }
  for (const member of unhealthy) {
    const remediation = member.remediation;
    if (!remediation) {
      const since = member.health?.since;
      if (member.health?.state === 'UNHEALTHY' && since && now.getTime() - since.getTime() >= policy.unhealthySeconds * 1000) {
        steps.push({ kind: 'START', nodeId: member.id, rung: REMEDIATION_RUNGS[0] });
      }
      continue;
    }
    if (remediation.exhausted || now.getTime() < new Date(remediation.deadline).getTime()) {
      continue;
    }
    const after = REMEDIATION_RUNGS[REMEDIATION_RUNGS.indexOf(remediation.rung) + 1];
    const next = after === 'REPLACE' && member.replaceable !== true ? undefined : after;
    steps.push(next ? { kind: 'ESCALATE', nodeId: member.id, rung: next } : { kind: 'EXHAUSTED', nodeId: member.id });
  }
  return { held: null, steps };
}
