import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a pool member stands gets its message code and parameters beside its English text, so
 * clients show it in their language. Rows from before keep only their text (null).
 */
export class NodeGroupMemberCoded1767450000000 implements MigrationInterface {
  name = 'NodeGroupMemberCoded1767450000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE node_group_members ADD COLUMN reason_coded jsonb NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE node_group_members DROP COLUMN IF EXISTS reason_coded`);
  }
}
