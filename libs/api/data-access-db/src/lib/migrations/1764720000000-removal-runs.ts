import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Removal runs and their events. One RUNNING run per node at most (partial unique index), so
 * two removals of one node never run at once, whichever replica starts them.
 */
export class RemovalRuns1764720000000 implements MigrationInterface {
  name = 'RemovalRuns1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE removal_runs (
        id uuid PRIMARY KEY,
        node_id uuid NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        node_name text NOT NULL,
        node_uid text,
        status text NOT NULL,
        phase text NOT NULL,
        options jsonb NOT NULL,
        reason text,
        blocking jsonb NOT NULL DEFAULT '[]',
        cancel_requested boolean NOT NULL DEFAULT false,
        requested_by text NOT NULL,
        owner text,
        heartbeat_at timestamptz,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX removal_runs_one_running ON removal_runs (node_id) WHERE status = 'RUNNING'`);
    await queryRunner.query(`CREATE INDEX removal_runs_node ON removal_runs (node_id, started_at)`);
    await queryRunner.query(`
      CREATE TABLE removal_events (
        id bigserial PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES removal_runs(id) ON DELETE CASCADE,
        seq integer NOT NULL,
        kind text NOT NULL,
        pod text,
        pdb text,
        message text NOT NULL,
        detail jsonb,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT removal_events_run_seq UNIQUE (run_id, seq)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS removal_events`);
    await queryRunner.query(`DROP TABLE IF EXISTS removal_runs`);
  }
}
