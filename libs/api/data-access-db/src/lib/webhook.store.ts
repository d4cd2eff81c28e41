import type { DataSource } from 'typeorm';
import type { NodeStatus } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';
import { isUuid } from './node.store';
import { returningRows } from './returning-rows';

/** A cluster's webhook endpoint as stored (its secret sealed). */
export interface WebhookEndpointRecord {
  readonly id: string;
  readonly clusterId: string;
  readonly url: string;
  readonly description: string;
  readonly secretSealed: string;
  readonly createdBy: string;
  readonly createdAt: Date;
  /** The last node transition (`node_transitions.seq`) handled: delivered, or not of its cluster. */
  readonly deliveredSeq: number;
  readonly lastDeliveredAt: Date | null;
  /** Attempts that failed in a row (0 once one succeeds). */
  readonly failures: number;
  readonly failingSince: Date | null;
  /** When the next attempt is due after a failure; null when none waits. */
  readonly retryAt: Date | null;
  readonly lastError: string | null;
}

/**
 * One change of a node's status, as the `nodes` trigger recorded it, or an event of what waits
 * (`eventType` set, what it names in `detail`): a drain blocked, a CSR pending too long.
 */
export interface NodeTransitionRecord {
  readonly seq: number;
  readonly eventId: string;
  /** Null for a CSR of a node this service has no record of. */
  readonly nodeId: string | null;
  readonly clusterId: string;
  readonly hostname: string;
  readonly oldStatus: NodeStatus | null;
  readonly newStatus: NodeStatus;
  readonly reason: string | null;
  readonly reasonCoded: Message | null;
  readonly occurredAt: Date;
  /** Null for a status change (its type follows from the statuses). */
  readonly eventType: string | null;
  readonly detail: Record<string, unknown> | null;
}

/** A CSR pending longer than the clusters' webhooks are told about. */
export interface PendingCsrEvent {
  readonly clusterId: string;
  readonly csrName: string;
  /** The node the CSR is for (its common name's `system:node:` name, or its requester's). */
  readonly nodeName: string;
  readonly requester: string | null;
  readonly signerName: string;
  readonly createdAt: Date;
}

/** One attempt to deliver an event to an endpoint. */
export interface WebhookDeliveryRecord {
  readonly id: number;
  readonly endpointId: string;
  readonly eventSeq: number;
  readonly eventId: string;
  readonly eventType: string;
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly attemptedAt: Date;
}

const ENDPOINT_COLUMNS = `id, cluster_id AS "clusterId", url, description, secret_sealed AS "secretSealed", created_by AS "createdBy", created_at AS "createdAt",
  delivered_seq::float8 AS "deliveredSeq", last_delivered_at AS "lastDeliveredAt", failures, failing_since AS "failingSince", retry_at AS "retryAt", last_error AS "lastError"`;

/**
 * `webhook_endpoints`, `webhook_deliveries` and the `node_transitions` they deliver (written by a
 * trigger on `nodes`, never by the service's code).
 */
export class WebhookStore {
  constructor(private readonly dataSource: DataSource) {}

  /** A new endpoint, delivering the transitions recorded from now on. */
  async create(endpoint: Pick<WebhookEndpointRecord, 'id' | 'clusterId' | 'url' | 'description' | 'secretSealed' | 'createdBy'>): Promise<WebhookEndpointRecord> {
    const [row] = await this.dataSource.query<WebhookEndpointRecord[]>(
      `INSERT INTO webhook_endpoints (id, cluster_id, url, description, secret_sealed, created_by, delivered_seq)
       VALUES ($1, $2, $3, $4, $5, $6, (SELECT COALESCE(max(seq), 0) FROM node_transitions)) RETURNING ${ENDPOINT_COLUMNS}`,
      [endpoint.id, endpoint.clusterId, endpoint.url, endpoint.description, endpoint.secretSealed, endpoint.createdBy],
    );
    return row;
  }

  async find(id: string): Promise<WebhookEndpointRecord | null> {
    if (!isUuid(id)) {
      return null;
    }
    const [row] = await this.dataSource.query<WebhookEndpointRecord[]>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]);
    return row ?? null;
  }

  async ofCluster(clusterId: string): Promise<WebhookEndpointRecord[]> {
    if (!isUuid(clusterId)) {
      return [];
    }
    return this.dataSource.query<WebhookEndpointRecord[]>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE cluster_id = $1 ORDER BY created_at, id`, [clusterId]);
  }

  /** False when there was no such endpoint. */
  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) {
      return false;
    }
    const rows = await returningRows<{ id: string }>(this.dataSource, `DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id`, [id]);
    return rows.length === 1;
  }

  /** Endpoints with transitions past their cursor and no retry waiting: those a delivery job should run for. */
  async behind(): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM webhook_endpoints WHERE delivered_seq < (SELECT COALESCE(max(seq), 0) FROM node_transitions) AND (retry_at IS NULL OR retry_at <= now())`,
    );
    return rows.map((row) => row.id);
  }

  /** The transitions after `seq`, of every cluster (a gap in their numbers shows one not committed yet), oldest first. */
  transitionsAfter(seq: number, limit: number): Promise<NodeTransitionRecord[]> {
    return this.dataSource.query<NodeTransitionRecord[]>(
      `SELECT seq::float8 AS seq, event_id AS "eventId", node_id AS "nodeId", cluster_id AS "clusterId", hostname, old_status AS "oldStatus", new_status AS "newStatus",
              reason, reason_coded AS "reasonCoded", occurred_at AS "occurredAt", event_type AS "eventType", detail
         FROM node_transitions WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [seq, limit],
    );
  }

  /** The clusters that have an endpoint: those whose waits are worth looking for. */
  async clustersWithEndpoints(): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ cluster_id: string }>>(`SELECT DISTINCT cluster_id FROM webhook_endpoints`);
    return rows.map((row) => row.cluster_id);
  }

  /**
   * Records that these CSRs have been pending too long, each once for good (a CSR recorded
   * already, by this process or another, is left as it is), with the node of that name when the
   * cluster has one here. The number recorded now.
   */
  async recordPendingCsrs(events: readonly PendingCsrEvent[]): Promise<number> {
    let recorded = 0;
    for (const event of events) {
      const rows = await this.dataSource.query<Array<{ seq: string }>>(
        `INSERT INTO node_transitions (node_id, cluster_id, hostname, old_status, new_status, event_type, detail)
         SELECT n.id, $1, $2, n.status, COALESCE(n.status, 'UNKNOWN'), 'csr.pending',
                jsonb_build_object('csr', $3::text, 'requester', $4::text, 'signer_name', $5::text, 'created_at', $6::timestamptz, 'known_node', n.id IS NOT NULL)
           FROM (SELECT 1) AS one
           LEFT JOIN LATERAL (SELECT id, status FROM nodes WHERE cluster_id = $1 AND lower(hostname) = lower($2) AND status <> 'REMOVED' ORDER BY created_at DESC LIMIT 1) n ON true
          -- Checked first, so a CSR recorded already takes no number of the sequence (a gap makes deliveries wait for it).
          WHERE NOT EXISTS (SELECT 1 FROM node_transitions WHERE event_type = 'csr.pending' AND cluster_id = $1 AND detail->>'csr' = $3::text)
         ON CONFLICT (cluster_id, (detail->>'csr')) WHERE event_type = 'csr.pending' DO NOTHING
         RETURNING seq`,
        [event.clusterId, event.nodeName, event.csrName, event.requester, event.signerName, event.createdAt],
      );
      recorded += rows.length;
    }
    return recorded;
  }

  /** The endpoint handled everything up to `seq`; `delivered` when it delivered (and so is no longer failing). */
  async advance(id: string, seq: number, delivered: boolean): Promise<void> {
    await this.dataSource.query(
      delivered
        ? `UPDATE webhook_endpoints SET delivered_seq = GREATEST(delivered_seq, $2), last_delivered_at = now(), failures = 0, failing_since = NULL, retry_at = NULL, last_error = NULL WHERE id = $1`
        : `UPDATE webhook_endpoints SET delivered_seq = GREATEST(delivered_seq, $2) WHERE id = $1`,
      [id, seq],
    );
  }

  /** An attempt failed: counted, and the next one is due at `retryAt`. Returns the failures in a row. */
  async failed(id: string, error: string, retryAt: Date): Promise<number> {
    const [row] = await returningRows<{ failures: number }>(
      this.dataSource,
      `UPDATE webhook_endpoints SET failures = failures + 1, failing_since = COALESCE(failing_since, now()), retry_at = $3, last_error = $2 WHERE id = $1 RETURNING failures`,
      [id, error, retryAt],
    );
    return row?.failures ?? 0;
  }

  async recordDelivery(delivery: Omit<WebhookDeliveryRecord, 'id' | 'attemptedAt'>): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_seq, event_id, event_type, ok, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [delivery.endpointId, delivery.eventSeq, delivery.eventId, delivery.eventType, delivery.ok, delivery.statusCode, delivery.error, delivery.durationMs],
    );
  }

  /** The endpoint's latest attempts, newest first. */
  async deliveries(endpointId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    if (!isUuid(endpointId)) {
      return [];
    }
    return this.dataSource.query<WebhookDeliveryRecord[]>(
      `SELECT id::float8 AS id, endpoint_id AS "endpointId", event_seq::float8 AS "eventSeq", event_id AS "eventId", event_type AS "eventType", ok, status_code AS "statusCode", error,
              duration_ms AS "durationMs", attempted_at AS "attemptedAt"
         FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2`,
      [endpointId, limit],
    );
  }

  /** Forgets transitions older than `before` that every endpoint has handled, and attempts older than `before`. */
  async prune(before: Date): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM node_transitions WHERE occurred_at < $1 AND seq <= (SELECT COALESCE(min(delivered_seq), (SELECT max(seq) FROM node_transitions)) FROM webhook_endpoints)`,
      [before],
    );
    await this.dataSource.query(`DELETE FROM webhook_deliveries WHERE attempted_at < $1`, [before]);
  }
}
