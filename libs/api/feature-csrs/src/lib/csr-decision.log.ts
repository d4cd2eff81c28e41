import type { CsrDecisionEntity, CsrDecisionKind, CsrDecisionStore, NewCsrDecision } from '@ccos/api/data-access-db';
import type { CsrCheck } from '@ccos/shared/domain';
import { bare, type CodedText } from '@ccos/shared/messages';

/** One decision to write down. */
export interface CsrDecisionInput {
  readonly clusterId: string;
  readonly csrName: string;
  readonly nodeId: string | null;
  readonly decision: CsrDecisionKind;
  /** A user name, or `auto-approver`. */
  readonly actor: string;
  /** Coded when the service words it; an operator's own words (a denial's reason) are data. */
  readonly reason: string | CodedText;
  readonly forced?: boolean;
  /** The ADMIN's written reason for a forced approval. */
  readonly forceReason?: string | null;
  readonly checks: readonly CsrCheck[];
}

/** The actor name of the auto-approver in csr_decisions and the audit trail. */
export const AUTO_APPROVER_ACTOR = 'auto-approver';

/**
 * The condition reasons the auto-approver writes on the CSR. Its decision row lands a moment after
 * the condition, so a view read in between names the auto-approver from these.
 */
export const AUTO_APPROVER_CONDITION_REASONS = { approved: 'CcosScalerAutoApprove', impostor: 'CcosScalerImpostor', superseded: 'CcosScalerSuperseded' } as const;

/** The decider a CSR condition's reason names: the auto-approver for its own reasons, else the reason as written. */
export function deciderOfCondition(reason: string | null | undefined, fallback: string): string {
  if (reason == null) {
    return fallback;
  }
  return (Object.values(AUTO_APPROVER_CONDITION_REASONS) as string[]).includes(reason) ? AUTO_APPROVER_ACTOR : reason;
}

/** Who made a decision, as the metrics count it: an operator, an ADMIN forcing past the policy, or the auto-approver. */
export type CsrDecider = 'operator' | 'forced' | 'auto-approver';

/** Told about every decision written (once each: the replica that wrote it), for metrics. */
export type CsrDecisionObserver = (decision: { readonly clusterId: string; readonly decision: CsrDecisionKind; readonly decider: CsrDecider }) => void;

/** Who decided, as the metrics label it. */
export function deciderOf(input: Pick<CsrDecisionInput, 'actor' | 'forced'>): CsrDecider {
  return input.actor === AUTO_APPROVER_ACTOR ? 'auto-approver' : input.forced ? 'forced' : 'operator';
}

/** Every approval, denial and (once per CSR) why the auto-approver left one pending, told to the metrics as written. */
export class CsrDecisionLog {
  constructor(private readonly decisions: CsrDecisionStore, private readonly observer?: CsrDecisionObserver) {}

  async record(input: CsrDecisionInput): Promise<CsrDecisionEntity> {
    const saved = await this.decisions.insert(toEntity(input));
    this.observer?.({ clusterId: input.clusterId, decision: input.decision, decider: deciderOf(input) });
    return saved;
  }

  /**
   * Records LEFT_PENDING unless this CSR already has such a record (a unique index makes
   * that hold across replicas and fail-overs). Returns whether it was written.
   */
  async recordLeftPendingOnce(input: Omit<CsrDecisionInput, 'decision'>): Promise<boolean> {
    const { decision: _leftPending, ...row } = toEntity({ ...input, decision: 'LEFT_PENDING' });
    const written = await this.decisions.insertLeftPendingOnce(row);
    if (written) {
      this.observer?.({ clusterId: input.clusterId, decision: 'LEFT_PENDING', decider: deciderOf(input) });
    }
    return written;
  }

  /** Decisions of these CSRs (all of the cluster's when `names` is absent), oldest first, by CSR name. */
  async of(clusterId: string, names?: readonly string[]): Promise<Map<string, CsrDecisionEntity[]>> {
    const found = await this.decisions.ofCluster(clusterId, names);
    const byName = new Map<string, CsrDecisionEntity[]>();
    for (const decision of found) {
      byName.set(decision.csrName, [...(byName.get(decision.csrName) ?? []), decision]);
    }
    return byName;
  }
}

function toEntity(input: CsrDecisionInput): NewCsrDecision {
  return {
    clusterId: input.clusterId,
    csrName: input.csrName,
    nodeId: input.nodeId,
    decision: input.decision,
    actor: input.actor,
    reason: typeof input.reason === 'string' ? input.reason : input.reason.message,
    reasonCoded: typeof input.reason === 'string' ? null : bare(input.reason),
    forced: input.forced ?? false,
    forceReason: input.forceReason ?? null,
    checks: input.checks.map(({ name, passed, detail, detailCode, detailParams, overridable }) => ({ name, passed, detail, detailCode, detailParams, overridable })),
  };
}
