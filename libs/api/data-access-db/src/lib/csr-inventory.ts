import type { DataSource } from 'typeorm';
import type { InventoryNodeFacts } from '@ccos/shared/domain';

/** A node of the inventory as the CSR policy sees it, with its id and its latest run's. */
export interface InventoryNode extends InventoryNodeFacts {
  readonly id: string;
  readonly runId: string | null;
}

interface InventoryRow {
  id: string;
  hostname: string;
  status: string;
  ip: string | null;
  run_id: string | null;
  run_status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | null;
  run_started_at: Date | null;
  run_finished_at: Date | null;
  kubelet_started_at: Date | null;
  bootstrap_identity: string | null;
  bootstrap_identity_uid: string | null;
}

/**
 * What this service knows about a cluster's nodes for the CSR policy: hostnames, the IPs
 * entered for them, their latest install run, when its START_KUBELET step first started and
 * the bootstrap identity minted for it. Removed nodes are left out: a removed host has to be
 * installed from scratch to join again.
 */
export class CsrInventory {
  constructor(private readonly dataSource: DataSource) {}

  /** The cluster's nodes that are not REMOVED, by hostname. */
  async of(clusterId: string): Promise<InventoryNode[]> {
    // The kubelet start is taken from the service's clock (received_at), the same kind of
    // clock as the API server's creationTimestamp; the host's clock may be off. The first
    // STARTED opens the window: a re-sent or repeated event cannot move it.
    const rows: InventoryRow[] = await this.dataSource.query(
      `SELECT n.id, n.hostname, n.status, n.ip, r.id AS run_id, r.status AS run_status, r.bootstrap_identity, r.bootstrap_identity_uid,
              r.started_at AS run_started_at, r.finished_at AS run_finished_at,
              (SELECT min(e.received_at) FROM step_events e
                WHERE e.run_id = r.id AND e.step = 'START_KUBELET' AND e.status = 'STARTED') AS kubelet_started_at
         FROM nodes n
         LEFT JOIN LATERAL (
           SELECT id, status, bootstrap_identity, bootstrap_identity_uid, started_at, finished_at FROM install_runs WHERE node_id = n.id ORDER BY started_at DESC LIMIT 1
         ) r ON true
        WHERE n.cluster_id = $1 AND n.status <> 'REMOVED'
        ORDER BY n.hostname`,
      [clusterId],
    );
    return rows.map((row) => ({
      id: row.id,
      hostname: row.hostname,
      ips: row.ip ? [row.ip] : [],
      joined: row.status === 'JOINED',
      runId: row.run_id,
      installRun: row.run_status
        ? {
            status: row.run_status,
            kubeletStartedAt: row.kubelet_started_at ? new Date(row.kubelet_started_at) : null,
            startedAt: row.run_started_at ? new Date(row.run_started_at) : null,
            finishedAt: row.run_finished_at ? new Date(row.run_finished_at) : null,
            bootstrapIdentity: row.bootstrap_identity ? { username: row.bootstrap_identity, uid: row.bootstrap_identity_uid } : null,
          }
        : null,
    }));
  }
}
