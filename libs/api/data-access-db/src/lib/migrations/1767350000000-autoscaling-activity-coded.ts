import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An autoscaling decision's reason gets its message code and parameters beside its English text,
 * so clients show it in their language. Rows from before keep only their text (null).
 */
export class AutoscalingActivityCoded1767350000000 implements MigrationInterface {
  name = 'AutoscalingActivityCoded1767350000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE autoscaling_activities ADD COLUMN reason_coded jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE autoscaling_activities DROP COLUMN IF EXISTS reason_coded`);
  }
}
