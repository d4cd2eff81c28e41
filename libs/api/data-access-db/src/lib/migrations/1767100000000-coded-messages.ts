import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each stored text the server produced gets its message code and parameters beside it
 * (`{ "code": …, "params": … }`, see libs/shared/messages), so clients render it in their
 * language. Rows from before keep only their English text (the column stays null).
 */
export class CodedMessages1767100000000 implements MigrationInterface {
  name = 'CodedMessages1767100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN status_reason_coded jsonb`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN reason_coded jsonb`);
    await queryRunner.query(`ALTER TABLE step_events ADD COLUMN message_coded jsonb`);
    await queryRunner.query(`ALTER TABLE removal_runs ADD COLUMN reason_coded jsonb`);
    await queryRunner.query(`ALTER TABLE removal_events ADD COLUMN message_coded jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS status_reason_coded`);
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS reason_coded`);
    await queryRunner.query(`ALTER TABLE step_events DROP COLUMN IF EXISTS message_coded`);
    await queryRunner.query(`ALTER TABLE removal_runs DROP COLUMN IF EXISTS reason_coded`);
    await queryRunner.query(`ALTER TABLE removal_events DROP COLUMN IF EXISTS message_coded`);
  }
}
