import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Four-eyes approval: a cluster may require a second person for actions that cannot be undone or
 * that pass a safety check (`clusters.four_eyes`, off by default). Such an action is held as an
 * `approval_requests` row until another user with the action's role approves it (it then runs,
 * as its requester's), rejects it, or it expires.
 */
export class FourEyes1767640000000 implements MigrationInterface {
  name = 'FourEyes1767640000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN four_eyes boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`
      CREATE TABLE approval_requests (
        id uuid PRIMARY KEY,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        action text NOT NULL,
        target text NOT NULL,
        params jsonb NOT NULL,
        preview jsonb NULL,
        requested_by text NOT NULL,
        requested_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        status text NOT NULL DEFAULT 'PENDING',
        decided_by text NULL,
        decided_at timestamptz NULL,
        decision_reason text NULL,
        outcome text NULL,
        outcome_coded jsonb NULL
      )`);
    await queryRunner.query(`CREATE INDEX approval_requests_cluster ON approval_requests (cluster_id, requested_at DESC)`);
    await queryRunner.query(`CREATE INDEX approval_requests_pending ON approval_requests (expires_at) WHERE status = 'PENDING'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS approval_requests`);
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS four_eyes`);
  }
}
