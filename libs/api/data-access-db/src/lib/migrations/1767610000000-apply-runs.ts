import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Apply runs: an install run on a joined node that re-runs some of the install steps for a rollout
 * (UPGRADE, REAPPLY). Its purpose, the steps it runs, and the rollout node's run.
 */
export class ApplyRuns1767610000000 implements MigrationInterface {
  name = 'ApplyRuns1767610000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN purpose text NOT NULL DEFAULT 'INSTALL' CHECK (purpose IN ('INSTALL', 'APPLY')), ADD COLUMN steps text[] NULL`);
    await queryRunner.query(`ALTER TABLE rollout_nodes ADD COLUMN apply_run_id uuid NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE rollout_nodes DROP COLUMN IF EXISTS apply_run_id`);
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS purpose, DROP COLUMN IF EXISTS steps`);
  }
}
