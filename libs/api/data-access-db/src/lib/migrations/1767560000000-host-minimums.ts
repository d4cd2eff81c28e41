import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A cluster's default minimums for every host added to it (CPUs, memory, largest disk); null asks nothing. */
export class HostMinimums1767560000000 implements MigrationInterface {
  name = 'HostMinimums1767560000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters ADD COLUMN IF NOT EXISTS host_minimums jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE clusters DROP COLUMN IF EXISTS host_minimums`);
  }
}
