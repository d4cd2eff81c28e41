import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A node's health: its Node's Ready condition as the cluster shows it (status and when it last
 * changed, kept by the inventory sync) and the last check of its host over SSH (reachable, the
 * kubelet unit active). Null until first seen or checked.
 */
export class NodeHealth1767510000000 implements MigrationInterface {
  name = 'NodeHealth1767510000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN ready_status text NULL, ADD COLUMN ready_since timestamptz NULL, ADD COLUMN host_health jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS ready_status, DROP COLUMN IF EXISTS ready_since, DROP COLUMN IF EXISTS host_health`);
  }
}
