import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Real sessions instead of a per-user generation (one device can be signed out alone),
 * users that can be disabled, and the table the login limiter (rate-limiter-flexible's
 * Postgres store) keeps its counters in. The limiter is told the table exists, so it never
 * creates one itself; the columns are the ones its store reads and writes.
 */
export class UserSessionsAndLoginLimits1765100000000 implements MigrationInterface {
  name = 'UserSessionsAndLoginLimits1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ADD COLUMN disabled_at timestamptz`);
    // Tokens of the generation scheme carry no session id; they stop working, and users sign in again.
    await queryRunner.query(`ALTER TABLE users DROP COLUMN session_generation`);
    await queryRunner.query(`
      CREATE TABLE user_sessions (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        source_address text NOT NULL,
        user_agent text,
        revoked_at timestamptz,
        revoked_reason text
      )`);
    await queryRunner.query(`CREATE INDEX user_sessions_user ON user_sessions (user_id)`);
    await queryRunner.query(`
      CREATE TABLE login_limits (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`);
    await queryRunner.query(`CREATE INDEX login_limits_expire ON login_limits (expire)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS login_limits`);
    await queryRunner.query(`DROP TABLE IF EXISTS user_sessions`);
    await queryRunner.query(`ALTER TABLE users ADD COLUMN session_generation integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE users DROP COLUMN disabled_at`);
  }
}
