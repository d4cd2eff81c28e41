import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run's agent is started by a durable job (`install.launch`), which the job engine gives to one
 * worker at a time and hands to another when that worker dies: the replicas' own launch claims go.
 * A run whose agent was never started is queued again when the service starts.
 */
export class LaunchJobs1767570000000 implements MigrationInterface {
  name = 'LaunchJobs1767570000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS launch_owner, DROP COLUMN IF EXISTS launch_heartbeat_at`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs ADD COLUMN IF NOT EXISTS launch_owner text, ADD COLUMN IF NOT EXISTS launch_heartbeat_at timestamptz`);
  }
}
