import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches: the hosts of one bulk add, installed together. Each node of a batch carries its
 * phase in it (queued, installing, joined, failed, ...), so a batch install goes on after a
 * restart. The host verdict (clean, cleanable with its items, reinstall required) is stored
 * with the node when its checks ran.
 */
export class NodeBatches1766200000000 implements MigrationInterface {
  name = 'NodeBatches1766200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE node_batches (
        id uuid PRIMARY KEY,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        created_by text NOT NULL,
        source text NOT NULL,
        concurrency integer NOT NULL DEFAULT 10,
        install_requested_by text,
        install_requested_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN batch_id uuid REFERENCES node_batches(id) ON DELETE SET NULL`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN batch_position integer`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN batch_phase text`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN host_verdict jsonb`);
    await queryRunner.query(`CREATE INDEX nodes_batch ON nodes (batch_id, batch_position) WHERE batch_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS nodes_batch`);
    for (const column of ['host_verdict', 'batch_phase', 'batch_position', 'batch_id']) {
      await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS ${column}`);
    }
    await queryRunner.query(`DROP TABLE IF EXISTS node_batches`);
  }
}
