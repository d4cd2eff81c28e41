import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The agent channel: the CA the service generates for its HTTPS certificate (shared by
 * every replica), and how each install run's agent reached the service. Runs before
 * this migration all used plain HTTP, so that is what they say; so does any run written
 * without saying (the install service always says), as the cautious reading.
 */
export class AgentChannel1765000000000 implements MigrationInterface {
  name = 'AgentChannel1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE service_certificate_authorities (
        purpose text PRIMARY KEY,
        certificate_pem text NOT NULL,
        private_key_sealed text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN agent_channel text NOT NULL DEFAULT 'PLAIN_HTTP' CHECK (agent_channel IN ('HTTPS', 'PLAIN_HTTP'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS agent_channel`);
    await queryRunner.query(`DROP TABLE IF EXISTS service_certificate_authorities`);
  }
}
