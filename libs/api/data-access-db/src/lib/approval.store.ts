import type { DataSource } from 'typeorm';
import type { Message } from '@ccos/shared/messages';
import { isUuid } from './node.store';
import { returningRows } from './returning-rows';

export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'FAILED';

/** An action held for a second person's approval. */
export interface ApprovalRequestRecord {
  readonly id: string;
  readonly clusterId: string;
  /** What would run (REMOVE_NODE, FORCE_REMOVAL_DRAIN, FORCE_APPROVE_CSR). */
  readonly action: string;
  /** What it acts on, as people name it (a host name, a CSR name). */
  readonly target: string;
  /** The arguments it runs with, as asked. */
  readonly params: Record<string, unknown>;
  /** What it would do, as the requester saw it (the removal's preview: pods, budgets). */
  readonly preview: Record<string, unknown> | null;
  readonly requestedBy: string;
  readonly requestedAt: Date;
  readonly expiresAt: Date;
  /** APPROVED: approved and run (its outcome says how it went); FAILED: approved, and running it failed. */
  readonly status: ApprovalStatus;
  readonly decidedBy: string | null;
  readonly decidedAt: Date | null;
  readonly decisionReason: string | null;
  readonly outcome: string | null;
  readonly outcomeCoded: Message | null;
}

const COLUMNS = `id, cluster_id AS "clusterId", action, target, params, preview, requested_by AS "requestedBy", requested_at AS "requestedAt", expires_at AS "expiresAt",
  status, decided_by AS "decidedBy", decided_at AS "decidedAt", decision_reason AS "decisionReason", outcome, outcome_coded AS "outcomeCoded"`;

/** `approval_requests`: held actions and how each was decided. */
export class ApprovalStore {
  constructor(private readonly dataSource: DataSource) {}

  async create(request: Pick<ApprovalRequestRecord, 'id' | 'clusterId' | 'action' | 'target' | 'params' | 'preview' | 'requestedBy' | 'expiresAt'>): Promise<ApprovalRequestRecord> {
    const [row] = await this.dataSource.query<ApprovalRequestRecord[]>(
      `INSERT INTO approval_requests (id, cluster_id, action, target, params, preview, requested_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [request.id, request.clusterId, request.action, request.target, JSON.stringify(request.params), request.preview === null ? null : JSON.stringify(request.preview), request.requestedBy, request.expiresAt],
    );
    return row;
  }

  async find(id: string): Promise<ApprovalRequestRecord | null> {
    if (!isUuid(id)) {
      return null;
    }
    const [row] = await this.dataSource.query<ApprovalRequestRecord[]>(`SELECT ${COLUMNS} FROM approval_requests WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** The cluster's requests, newest first; only the pending ones with `pendingOnly`. */
  async ofCluster(clusterId: string, pendingOnly: boolean, limit: number): Promise<ApprovalRequestRecord[]> {
    if (!isUuid(clusterId)) {
      return [];
    }
    return this.dataSource.query<ApprovalRequestRecord[]>(
      `SELECT ${COLUMNS} FROM approval_requests WHERE cluster_id = $1 AND ($2::boolean IS FALSE OR status = 'PENDING') ORDER BY requested_at DESC, id LIMIT $3`,
      [clusterId, pendingOnly, limit],
    );
  }

  /**
   * Decides a pending request that has not expired at `now`, by someone other than its requester:
   * the one call that moves it (two approvers at once: one wins). Null when it was not pending,
   * had expired, or `by` asked for it.
   */
  async decide(id: string, status: 'APPROVED' | 'REJECTED', by: string, reason: string | null, now: Date): Promise<ApprovalRequestRecord | null> {
    const [row] = await returningRows<ApprovalRequestRecord>(
      this.dataSource,
      `UPDATE approval_requests SET status = $2, decided_by = $3, decided_at = $5, decision_reason = $4
        WHERE id = $1 AND status = 'PENDING' AND expires_at > $5 AND requested_by <> $3 RETURNING ${COLUMNS}`,
      [id, status, by, reason, now],
    );
    return row ?? null;
  }

  /** How running an approved request went (FAILED when it threw). */
  async recordOutcome(id: string, failed: boolean, outcome: string, outcomeCoded: Message | null): Promise<ApprovalRequestRecord | null> {
    const [row] = await returningRows<ApprovalRequestRecord>(
      this.dataSource,
      `UPDATE approval_requests SET status = CASE WHEN $2 THEN 'FAILED' ELSE status END, outcome = $3, outcome_coded = $4 WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, failed, outcome, outcomeCoded === null ? null : JSON.stringify(outcomeCoded)],
    );
    return row ?? null;
  }

  /** Marks the pending requests past their time EXPIRED; those it marked. */
  expire(now: Date): Promise<ApprovalRequestRecord[]> {
    return returningRows<ApprovalRequestRecord>(this.dataSource, `UPDATE approval_requests SET status = 'EXPIRED', decided_at = $1 WHERE status = 'PENDING' AND expires_at <= $1 RETURNING ${COLUMNS}`, [now]);
  }
}
