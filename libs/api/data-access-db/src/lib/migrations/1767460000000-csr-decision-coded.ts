import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A CSR decision's reason gets its message code and parameters beside its English text, so
 * clients show it in their language. Rows from before, and an operator's own written reason, keep only their text (null).
 */
export class CsrDecisionCoded1767460000000 implements MigrationInterface {
  name = 'CsrDecisionCoded1767460000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE csr_decisions ADD COLUMN reason_coded jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE csr_decisions DROP COLUMN IF EXISTS reason_coded`);
  }
}
