import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CSR decisions: whether an operator overrode the policy (`forced`), and at most one
 * LEFT_PENDING record per CSR, so a fail-over of the auto-approver cannot repeat it.
 */
export class CsrDecisionsForced1764633600000 implements MigrationInterface {
  name = 'CsrDecisionsForced1764633600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE csr_decisions ADD COLUMN forced boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`CREATE UNIQUE INDEX csr_decisions_left_pending_once ON csr_decisions (cluster_id, csr_name) WHERE decision = 'LEFT_PENDING'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS csr_decisions_left_pending_once`);
    await queryRunner.query(`ALTER TABLE csr_decisions DROP COLUMN IF EXISTS forced`);
  }
}
