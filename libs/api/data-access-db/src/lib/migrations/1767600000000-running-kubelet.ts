import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What a host runs besides its files, as its last install found it: the kernel and the running kubelet's version and flags. */
export class RunningKubelet1767600000000 implements MigrationInterface {
  name = 'RunningKubelet1767600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE host_manifests
      ADD COLUMN kernel_release text NULL,
      ADD COLUMN kubelet_version text NULL,
      ADD COLUMN kubelet_flags jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE host_manifests DROP COLUMN IF EXISTS kernel_release, DROP COLUMN IF EXISTS kubelet_version, DROP COLUMN IF EXISTS kubelet_flags`);
  }
}
