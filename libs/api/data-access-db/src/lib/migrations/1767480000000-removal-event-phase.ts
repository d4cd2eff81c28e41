import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each removal event records the phase its run was in when it happened; readers used to borrow
 * the run's current phase (every line of a finished run's log said DONE). Events from before get
 * the phase their kind belongs to; a resumption names its phase in its message, and the run's
 * closing event takes the phase the run ended in.
 */
export class RemovalEventPhase1767480000000 implements MigrationInterface {
  name = 'RemovalEventPhase1767480000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE removal_events ADD COLUMN phase text NULL`);
    await queryRunner.query(`UPDATE removal_events AS event SET phase = CASE
        WHEN event.kind IN ('KUBELET_STOPPED', 'KUBELET_NOT_STOPPED') THEN 'STOP_KUBELET'
        WHEN event.kind IN ('NODE_DELETED', 'NODE_NOT_DELETED') THEN 'DELETE_NODE'
        WHEN event.kind = 'CSRS_DENIED' THEN 'DENY_CSRS'
        WHEN event.kind = 'TOKENS_REVOKED' THEN 'REVOKE_TOKENS'
        WHEN event.kind IN ('HOST_CLEANED', 'HOST_NOT_CLEANED') THEN 'CLEAN_HOST'
        WHEN event.kind = 'RESUMED' AND event.message_coded -> 'params' ->> 'phase' IS NOT NULL THEN event.message_coded -> 'params' ->> 'phase'
        WHEN event.kind = 'FINISHED' THEN run.phase
        ELSE 'DRAIN' END
      FROM removal_runs AS run WHERE run.id = event.run_id`);
    await queryRunner.query(`ALTER TABLE removal_events ALTER COLUMN phase SET NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE removal_events DROP COLUMN IF EXISTS phase`);
  }
}
