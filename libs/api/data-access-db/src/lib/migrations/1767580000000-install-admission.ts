import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Join-storm admission: a cluster runs at most `installs_at_once` installs at a time; runs beyond
 * wait, in the order they were asked for, until one ends (`admitted_at` null while a run waits).
 * Runs from before were all admitted when they started.
 */
export class InstallAdmission1767580000000 implements MigrationInterface {
  name = 'InstallAdmission1767580000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN IF NOT EXISTS installs_at_once integer NOT NULL DEFAULT 50`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN IF NOT EXISTS admitted_at timestamptz NULL`);
    await queryRunner.query(`UPDATE install_runs SET admitted_at = started_at WHERE admitted_at IS NULL`);
    // A run is inserted waiting (admitted_at null) only by the install service's admission; any other insert is a run under way.
    await queryRunner.query(`ALTER TABLE install_runs ALTER COLUMN admitted_at SET DEFAULT now()`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS install_runs_waiting ON install_runs (started_at, id) WHERE status = 'RUNNING' AND admitted_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS install_runs_waiting`);
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS admitted_at`);
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS installs_at_once`);
  }
}
