import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rolling operations: a rollout over some of a cluster's nodes (its kind, budget, maintenance
 * window, the alerts that hold it, status and what it waits for), and each of its nodes' phase.
 * At most one rollout runs or is paused per cluster, so two budgets never share the same nodes.
 */
export class Rollouts1767590000000 implements MigrationInterface {
  name = 'Rollouts1767590000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE rollouts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
      kind text NOT NULL,
      status text NOT NULL,
      max_unavailable integer NOT NULL,
      max_unavailable_is_percent boolean NOT NULL DEFAULT false,
      maintenance_window jsonb NULL,
      pause_on_alerts jsonb NOT NULL DEFAULT '[]'::jsonb,
      drain_timeout_seconds integer NOT NULL,
      ready_timeout_seconds integer NOT NULL,
      reason jsonb NULL,
      waiting_for jsonb NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz NULL
    )`);
    await queryRunner.query(`CREATE UNIQUE INDEX rollouts_one_active_per_cluster ON rollouts (cluster_id) WHERE status IN ('RUNNING', 'PAUSED')`);
    await queryRunner.query(`CREATE INDEX rollouts_of_cluster ON rollouts (cluster_id, created_at DESC)`);
    await queryRunner.query(`CREATE TABLE rollout_nodes (
      rollout_id uuid NOT NULL REFERENCES rollouts(id) ON DELETE CASCADE,
      node_id uuid NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
      position integer NOT NULL,
      node_name text NOT NULL,
      phase text NOT NULL DEFAULT 'PENDING',
      boot_id_before text NULL,
      rebooted_at timestamptz NULL,
      problem jsonb NULL,
      started_at timestamptz NULL,
      finished_at timestamptz NULL,
      PRIMARY KEY (rollout_id, node_id)
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS rollout_nodes`);
    await queryRunner.query(`DROP TABLE IF EXISTS rollouts`);
  }
}
