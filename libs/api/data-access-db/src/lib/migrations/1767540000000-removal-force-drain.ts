import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An ADMIN's decision that a removal's drain goes past the PodDisruptionBudgets holding it (who, why, when). */
export class RemovalForceDrain1767540000000 implements MigrationInterface {
  name = 'RemovalForceDrain1767540000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE removal_runs ADD COLUMN force_drain jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE removal_runs DROP COLUMN IF EXISTS force_drain`);
  }
}
