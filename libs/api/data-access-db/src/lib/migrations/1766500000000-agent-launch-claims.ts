import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who is starting a run's agent and whether it has been started, so that another replica takes
 * over a start the replica that answered installNode died in. Runs from before count as started.
 */
export class AgentLaunchClaims1766500000000 implements MigrationInterface {
  name = 'AgentLaunchClaims1766500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN agent_launched_at timestamptz, ADD COLUMN launch_owner text, ADD COLUMN launch_heartbeat_at timestamptz`);
    await queryRunner.query(`UPDATE install_runs SET agent_launched_at = started_at`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS agent_launched_at, DROP COLUMN IF EXISTS launch_owner, DROP COLUMN IF EXISTS launch_heartbeat_at`);
  }
}
