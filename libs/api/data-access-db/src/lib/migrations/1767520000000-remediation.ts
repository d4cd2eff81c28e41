import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Remediation: each cluster's policy (null: off) and whether the cap holds it now (with since
 * when), and each node's remediation in progress (the rung it is at, its deadline).
 */
export class Remediation1767520000000 implements MigrationInterface {
  name = 'Remediation1767520000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN remediation_policy jsonb NULL, ADD COLUMN remediation_held jsonb NULL`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN remediation jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS remediation`);
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS remediation_policy, DROP COLUMN IF EXISTS remediation_held`);
  }
}
