import { type CodedText, message } from '@ccos/shared/messages';
import type { HealthState } from './node-health';

/** A member of a node group that a scale-down could remove. */
export interface ScaleDownCandidate {
  readonly nodeId: string;
  readonly hostname: string;
  /** Not yet joined: reserved for the group and installing, or an install that failed. */
  readonly joined: boolean;
  /** Its health while it is a member of the cluster; null when it is not (yet). */
  readonly health: HealthState | null;
  /** Since when it has been a member of the group (epoch ms): the newest goes first among equals. */
  readonly memberSince: number;
}

export const SCALE_DOWN_REASONS = ['NOT_JOINED', 'UNHEALTHY', 'HEALTH_UNKNOWN', 'NEWEST'] as const;
/** Why a member was chosen, in the order they are chosen by. */
export type ScaleDownReason = (typeof SCALE_DOWN_REASONS)[number];

export interface ScaleDownVictim {
  readonly candidate: ScaleDownCandidate;
  readonly reason: ScaleDownReason;
  /** The reason as the group's activity says it. */
  readonly text: CodedText;
}

function reasonOf(candidate: ScaleDownCandidate): ScaleDownReason {
  if (!candidate.joined) {
    return 'NOT_JOINED';
  }
  if (candidate.health === 'UNHEALTHY') {
    return 'UNHEALTHY';
  }
  return candidate.health === 'HEALTHY' ? 'NEWEST' : 'HEALTH_UNKNOWN';
}

/**
 * Which `count` members a scale-down removes, as an operator would: hosts that never joined
 * first (they serve nothing), then unhealthy members, then members whose health is not known,
 * then the newest (the longest-serving keep their warm caches); ties go by host name so the
 * choice is repeatable.
 */
export function pickScaleDownVictims(candidates: readonly ScaleDownCandidate[], count: number): ScaleDownVictim[] {
  const ranked = candidates.map((candidate) => ({ candidate, reason: reasonOf(candidate) }));
  ranked.sort(
    (a, b) =>
      SCALE_DOWN_REASONS.indexOf(a.reason) - SCALE_DOWN_REASONS.indexOf(b.reason) ||
      b.candidate.memberSince - a.candidate.memberSince ||
      a.candidate.hostname.localeCompare(b.candidate.hostname),
  );
  return ranked.slice(0, Math.max(0, count)).map(({ candidate, reason }) => ({
    candidate,
    reason,
    text: message('autoscaling.victim', { hostname: candidate.hostname, reason }),
  }));
}
