import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outcome of each cluster's last readiness check: when it ran and the checks that failed
 * (empty when all passed). Installs are refused while it names a failed check that a new check
 * still finds failing; null until the cluster is first checked.
 */
export class ClusterReadiness1767490000000 implements MigrationInterface {
  name = 'ClusterReadiness1767490000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN readiness_checked_at timestamptz NULL, ADD COLUMN readiness_failing text[] NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS readiness_checked_at, DROP COLUMN IF EXISTS readiness_failing`);
  }
}
