import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a host runs besides its files: the kernel and the running kubelet's version and flags as its
 * last install found them, and as its last inspection found them.
 */
export class RunningKubelet1767600000000 implements MigrationInterface {
  name = 'RunningKubelet1767600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE host_manifests ADD COLUMN running_at_install jsonb NULL, ADD COLUMN running_now jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE host_manifests DROP COLUMN IF EXISTS running_at_install, DROP COLUMN IF EXISTS running_now`);
  }
}
