import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The release whose artifact set a cluster's installs use when the operator overrides what the
 * cluster reports (ClusterVersion or /version); null follows the cluster.
 */
export class ClusterArtifactVersion1767200000000 implements MigrationInterface {
  name = 'ClusterArtifactVersion1767200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN artifact_version text NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS artifact_version`);
  }
}
