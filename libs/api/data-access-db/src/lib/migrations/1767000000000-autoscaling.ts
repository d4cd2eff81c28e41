import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Autoscaling: node groups (one hardware profile, one set of labels and taints, min and max
 * size, the target the autoscaler asked for), the hosts each group holds (spares waiting as
 * READY_TO_INSTALL nodes, members installed through the group, hosts taken out), and the
 * activity log of every decision. A node installed through a group carries the providerID its
 * kubelet was started with; a host returned to the pool continues as a new node record, its
 * earlier records pointing at it (`successor_node_id`), so the machine-id check does not take
 * its own earlier membership — ended by a completed scale-down — for a foreign one.
 */
export class Autoscaling1767000000000 implements MigrationInterface {
  name = 'Autoscaling1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE node_groups (
        id uuid PRIMARY KEY,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        name text NOT NULL,
        min_size integer NOT NULL,
        max_size integer NOT NULL,
        target_size integer NOT NULL DEFAULT 0,
        labels jsonb NOT NULL DEFAULT '[]',
        taints jsonb NOT NULL DEFAULT '[]',
        profile jsonb NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT node_groups_sizes CHECK (min_size >= 0 AND max_size >= min_size AND target_size >= 0 AND target_size <= max_size),
        CONSTRAINT node_groups_name UNIQUE (cluster_id, name)
      )`);
    await queryRunner.query(`
      CREATE TABLE node_group_members (
        node_id uuid PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
        group_id uuid NOT NULL REFERENCES node_groups(id) ON DELETE CASCADE,
        state text NOT NULL,
        reason text,
        predecessor_node_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX node_group_members_group ON node_group_members (group_id, state)`);
    await queryRunner.query(`
      CREATE TABLE autoscaling_activities (
        seq bigserial PRIMARY KEY,
        group_id uuid NOT NULL REFERENCES node_groups(id) ON DELETE CASCADE,
        kind text NOT NULL,
        node_id uuid,
        hostname text,
        reason text NOT NULL,
        actor text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX autoscaling_activities_group ON autoscaling_activities (group_id, seq DESC)`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN provider_id text`);
    await queryRunner.query(`ALTER TABLE nodes ADD COLUMN successor_node_id uuid`);
    await queryRunner.query(`CREATE UNIQUE INDEX nodes_provider_id ON nodes (provider_id) WHERE provider_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS nodes_provider_id`);
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS successor_node_id`);
    await queryRunner.query(`ALTER TABLE nodes DROP COLUMN IF EXISTS provider_id`);
    await queryRunner.query(`DROP TABLE IF EXISTS autoscaling_activities`);
    await queryRunner.query(`DROP TABLE IF EXISTS node_group_members`);
    await queryRunner.query(`DROP TABLE IF EXISTS node_groups`);
  }
}
