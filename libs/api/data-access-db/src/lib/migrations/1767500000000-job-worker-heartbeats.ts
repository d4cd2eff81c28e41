import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The job engine's workers (graphile-worker's) and when each last said it was alive: a job whose
 * worker stopped beating (a process killed with -9, a lost machine) is unlocked within seconds
 * rather than after graphile-worker's fixed four hours.
 */
export class JobWorkerHeartbeats1767500000000 implements MigrationInterface {
  name = 'JobWorkerHeartbeats1767500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE job_worker_heartbeats (worker_id text PRIMARY KEY, process text NOT NULL, beat_at timestamptz NOT NULL DEFAULT now())`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS job_worker_heartbeats`);
  }
}
