import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A switch of its own for serving-certificate renewals, on by default and for clusters
 * registered before it: turning join auto-approve off must not let certificates expire.
 */
export class ClusterAutoApproveRenewals1766100000000 implements MigrationInterface {
  name = 'ClusterAutoApproveRenewals1766100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN auto_approve_renewals boolean NOT NULL DEFAULT true`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS auto_approve_renewals`);
  }
}
