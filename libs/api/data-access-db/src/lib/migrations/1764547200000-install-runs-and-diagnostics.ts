import type { MigrationInterface, QueryRunner } from 'typeorm';

/** How a node logs in (without opening its sealed credentials), cancellation of runs, and agent diagnostics bundles. */
export class InstallRunsAndDiagnostics1764547200000 implements MigrationInterface {
  name = 'InstallRunsAndDiagnostics1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN ssh_auth_method text`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN host_key_algorithm text`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`
      CREATE TABLE install_diagnostics (
        run_id uuid PRIMARY KEY REFERENCES install_runs(id) ON DELETE CASCADE,
        content bytea NOT NULL,
        size integer NOT NULL,
        uploaded_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX install_runs_running ON install_runs (status) WHERE status = 'RUNNING'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS install_runs_running`);
    await queryRunner.query(`DROP TABLE IF EXISTS install_diagnostics`);
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS cancel_requested`);
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS host_key_algorithm`);
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS ssh_auth_method`);
  }
}
