import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A removal run names what it waits for (`blocker`, since when) and records an operator's
 * decision to skip the host-side part (`skip_host`); a node whose host was left as it was is
 * marked `reinstall_required` (why, coded).
 */
export class RemovalHostWait1767530000000 implements MigrationInterface {
  name = 'RemovalHostWait1767530000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE removal_runs ADD COLUMN blocker jsonb NULL, ADD COLUMN blocker_since timestamptz NULL, ADD COLUMN skip_host jsonb NULL`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN reinstall_required jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS reinstall_required`);
    await queryRunner.query(`ALTER TABLE removal_runs DROP COLUMN IF EXISTS blocker, DROP COLUMN IF EXISTS blocker_since, DROP COLUMN IF EXISTS skip_host`);
  }
}
