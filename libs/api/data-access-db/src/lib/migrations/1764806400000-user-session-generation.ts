import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A per-user session generation: bumping it ends every session of that user (sign-out, password change). */
export class UserSessionGeneration1764806400000 implements MigrationInterface {
  name = 'UserSessionGeneration1764806400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ADD COLUMN session_generation integer NOT NULL DEFAULT 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users DROP COLUMN IF EXISTS session_generation`);
  }
}
