import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook events for what waits, beside the status changes: a drain blocked by a
 * PodDisruptionBudget (recorded by a trigger on `removal_runs` when a run's blocker becomes a
 * budget, or another one) and a CSR left pending too long (recorded by the service, at most once
 * per CSR: a unique index). Such an event has its own `event_type` and a `detail`; a CSR's node
 * may have no record here (`node_id` null).
 */
export class WebhookWaits1767630000000 implements MigrationInterface {
  name = 'WebhookWaits1767630000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE node_transitions ADD COLUMN event_type text NULL, ADD COLUMN detail jsonb NULL, ALTER COLUMN node_id DROP NOT NULL`);
    await queryRunner.query(`CREATE UNIQUE INDEX node_transitions_csr_pending ON node_transitions (cluster_id, (detail->>'csr')) WHERE event_type = 'csr.pending'`);
    await queryRunner.query(`
      CREATE FUNCTION record_drain_blocked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO node_transitions (node_id, cluster_id, hostname, old_status, new_status, reason_coded, event_type, detail)
        SELECT n.id, n.cluster_id, n.hostname, n.status, n.status, NEW.blocker, 'drain.blocked',
               jsonb_build_object('removal_run_id', NEW.id, 'pdb', NEW.blocker->'params'->>'pdb', 'pod', NEW.blocker->'params'->>'pod', 'blocked_since', NEW.blocker_since)
          FROM nodes n WHERE n.id = NEW.node_id;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER removal_drain_blocked AFTER UPDATE OF blocker ON removal_runs FOR EACH ROW
        WHEN (NEW.blocker->>'code' = 'removal.blocker.budget' AND (OLD.blocker IS NULL OR OLD.blocker->>'code' IS DISTINCT FROM 'removal.blocker.budget' OR OLD.blocker->'params'->>'pdb' IS DISTINCT FROM NEW.blocker->'params'->>'pdb'))
        EXECUTE FUNCTION record_drain_blocked()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER IF EXISTS removal_drain_blocked ON removal_runs`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS record_drain_blocked()`);
    await queryRunner.query(`DROP INDEX IF EXISTS node_transitions_csr_pending`);
    await queryRunner.query(`DELETE FROM node_transitions WHERE node_id IS NULL`);
    await queryRunner.query(`ALTER TABLE node_transitions DROP COLUMN IF EXISTS event_type, DROP COLUMN IF EXISTS detail, ALTER COLUMN node_id SET NOT NULL`);
  }
}
