import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An install run counts its stored events and their bytes, so each event is admitted against the
 * run's caps in one conditional update instead of a count over its log; `events_capped_at` records
 * when the run first refused one for a cap. Runs from before get their counts from their events.
 */
export class InstallRunEventCaps1767471250000 implements MigrationInterface {
  name = 'InstallRunEventCaps1767471250000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs
      ADD COLUMN event_count integer NOT NULL DEFAULT 0,
      ADD COLUMN event_bytes bigint NOT NULL DEFAULT 0,
      ADD COLUMN events_capped_at timestamptz NULL`);
    await queryRunner.query(`UPDATE install_runs AS run SET event_count = counted.n, event_bytes = counted.bytes
      FROM (SELECT run_id, count(*) AS n,
                   sum(coalesce(octet_length(message), 0) + coalesce(octet_length(message_coded::text), 0) + coalesce(octet_length(detail::text), 0)) AS bytes
              FROM step_events GROUP BY run_id) AS counted
      WHERE counted.run_id = run.id`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE install_runs DROP COLUMN IF EXISTS event_count, DROP COLUMN IF EXISTS event_bytes, DROP COLUMN IF EXISTS events_capped_at`);
  }
}
