import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signed webhooks: every change of a node's status is recorded in `node_transitions` by a trigger,
 * in the transaction that made it (whatever code path changed it), numbered in commit order's
 * sequence; `webhook_endpoints` (per cluster, their secret sealed) deliver them in that order from a
 * cursor, and `webhook_deliveries` logs each attempt.
 */
export class Webhooks1767620000000 implements MigrationInterface {
  name = 'Webhooks1767620000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE node_transitions (
        seq bigserial PRIMARY KEY,
        event_id uuid NOT NULL DEFAULT gen_random_uuid(),
        node_id uuid NOT NULL,
        cluster_id uuid NOT NULL,
        hostname text NOT NULL,
        old_status text NULL,
        new_status text NOT NULL,
        reason text NULL,
        reason_coded jsonb NULL,
        occurred_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX node_transitions_occurred ON node_transitions (occurred_at)`);
    await queryRunner.query(`
      CREATE FUNCTION record_node_transition() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO node_transitions (node_id, cluster_id, hostname, old_status, new_status, reason, reason_coded)
        VALUES (NEW.id, NEW.cluster_id, NEW.hostname, CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.status END, NEW.status, NEW.status_reason, NEW.status_reason_coded);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER nodes_added AFTER INSERT ON nodes FOR EACH ROW EXECUTE FUNCTION record_node_transition()`);
    await queryRunner.query(`CREATE TRIGGER nodes_status_changed AFTER UPDATE OF status ON nodes FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION record_node_transition()`);
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        url text NOT NULL,
        description text NOT NULL DEFAULT '',
        secret_sealed text NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_seq bigint NOT NULL,
        last_delivered_at timestamptz NULL,
        failures integer NOT NULL DEFAULT 0,
        failing_since timestamptz NULL,
        retry_at timestamptz NULL,
        last_error text NULL
      )`);
    await queryRunner.query(`CREATE INDEX webhook_endpoints_cluster ON webhook_endpoints (cluster_id)`);
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id bigserial PRIMARY KEY,
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_seq bigint NOT NULL,
        event_id uuid NOT NULL,
        event_type text NOT NULL,
        ok boolean NOT NULL,
        status_code integer NULL,
        error text NULL,
        duration_ms integer NOT NULL,
        attempted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS webhook_deliveries`);
    await queryRunner.query(`DROP TABLE IF EXISTS webhook_endpoints`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS nodes_status_changed ON nodes`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS nodes_added ON nodes`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS record_node_transition()`);
    await queryRunner.query(`DROP TABLE IF EXISTS node_transitions`);
  }
}
