import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each host runs: the files its last successful install wrote (path, SHA-256, the step), the
 * artifact set they came from, and what the last inspection of the host found (drift: files changed
 * or gone; a problem when the host could not be inspected). One row per node, gone with the node.
 */
export class HostManifests1767550000000 implements MigrationInterface {
  name = 'HostManifests1767550000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE host_manifests (
      node_id uuid PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
      run_id uuid NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      artifact_set_version text NULL,
      artifact_manifest_sha256 text NULL,
      files jsonb NOT NULL,
      inspected_at timestamptz NULL,
      drift jsonb NOT NULL DEFAULT '[]'::jsonb,
      inspection_problem jsonb NULL
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS host_manifests`);
  }
}
