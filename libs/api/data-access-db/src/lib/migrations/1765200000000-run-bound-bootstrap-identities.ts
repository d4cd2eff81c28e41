import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Certificates bound to the host: every install run has a deadline (its agent token and its
 * bootstrap identity end with it, stalled or not), the bootstrap identity minted for it (user
 * name, UID, expiry, when it was revoked), the written reason of a forced CSR approval, and
 * notices the service raises on a run (an impostor's CSR, counted per requester).
 */
export class RunBoundBootstrapIdentities1765200000000 implements MigrationInterface {
  name = 'RunBoundBootstrapIdentities1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN deadline_at timestamptz`);
    // Runs from before deadlines get the default one (INSTALL_RUN_DEADLINE_MINUTES = 120).
    await queryRunner.query(`UPDATE install_runs SET deadline_at = started_at + interval '120 minutes'`);
    await queryRunner.query(
      `UPDATE install_runs SET agent_token_expires_at = deadline_at WHERE agent_token_expires_at IS NULL OR agent_token_expires_at > deadline_at`,
    );
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN bootstrap_identity text`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN bootstrap_identity_uid text`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN bootstrap_identity_expires_at timestamptz`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN bootstrap_identity_revoked_at timestamptz`);
    await queryRunner.query(
      `CREATE INDEX install_runs_identity_to_revoke ON install_runs (deadline_at) WHERE bootstrap_identity IS NOT NULL AND bootstrap_identity_revoked_at IS NULL`,
    );
    await queryRunner.query(`CREATE INDEX install_runs_running_deadline ON install_runs (deadline_at) WHERE status = 'RUNNING'`);
    await queryRunner.query(`ALTER TABLE csr_decisions ADD COLUMN force_reason text`);
    await queryRunner.query(`
      CREATE TABLE install_run_notices (
        id bigserial PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES install_runs(id) ON DELETE CASCADE,
        kind text NOT NULL,
        subject text NOT NULL,
        message text NOT NULL,
        detail jsonb,
        count integer NOT NULL DEFAULT 1,
        first_at timestamptz NOT NULL DEFAULT now(),
        last_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT install_run_notices_once UNIQUE (run_id, kind, subject)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS install_run_notices`);
    await queryRunner.query(`ALTER TABLE csr_decisions DROP COLUMN IF EXISTS force_reason`);
    await queryRunner.query(`DROP INDEX IF EXISTS install_runs_running_deadline`);
    await queryRunner.query(`DROP INDEX IF EXISTS install_runs_identity_to_revoke`);
    for (const column of ['bootstrap_identity_revoked_at', 'bootstrap_identity_expires_at', 'bootstrap_identity_uid', 'bootstrap_identity', 'deadline_at']) {
      await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS ${column}`);
    }
  }
}
