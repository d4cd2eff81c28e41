import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plain HTTP and unverified TLS to a cluster's API server only by an explicit setting. Clusters
 * registered before start without it: an insecure one then fails with a message saying so.
 */
export class ClusterInsecureTransport1765300000000 implements MigrationInterface {
  name = 'ClusterInsecureTransport1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN allow_insecure_transport boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS allow_insecure_transport`);
  }
}
