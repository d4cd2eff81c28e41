import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The first schema: clusters, nodes, install runs and their step events, CSR decisions, audit log, users. */
export class InitialSchema1764460800000 implements MigrationInterface {
  name = 'InitialSchema1764460800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE clusters (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        api_server_url text NOT NULL,
        vip text NOT NULL,
        credentials_sealed text NOT NULL,
        credential_kind text NOT NULL,
        csr_auto_approve boolean NOT NULL DEFAULT false,
        bootstrap_style text NOT NULL DEFAULT 'OPENSHIFT',
        machine_config_ca_cert text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        version integer NOT NULL DEFAULT 1,
        CONSTRAINT clusters_name_unique UNIQUE (name)
      )`);
    await queryRunner.query(`
      CREATE TABLE nodes (
        id uuid PRIMARY KEY,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE RESTRICT,
        hostname text NOT NULL,
        ip text,
        ssh_port integer NOT NULL DEFAULT 22,
        ssh_user text,
        ssh_credentials_sealed text,
        host_key_fingerprint text,
        offered_host_key_fingerprint text,
        labels jsonb NOT NULL DEFAULT '[]',
        taints jsonb NOT NULL DEFAULT '[]',
        status text NOT NULL,
        status_reason text,
        origin text NOT NULL DEFAULT 'ADDED',
        role text NOT NULL DEFAULT 'worker',
        ready boolean NOT NULL DEFAULT false,
        unschedulable boolean NOT NULL DEFAULT false,
        ever_joined boolean NOT NULL DEFAULT false,
        facts jsonb NOT NULL DEFAULT '{}',
        agent_sha256 text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        version integer NOT NULL DEFAULT 1
      )`);
    // A removed node keeps its record (history), so uniqueness holds among the others only.
    await queryRunner.query(`CREATE UNIQUE INDEX nodes_cluster_hostname_active ON nodes (cluster_id, hostname) WHERE status <> 'REMOVED'`);
    await queryRunner.query(`CREATE UNIQUE INDEX nodes_cluster_ip_active ON nodes (cluster_id, ip) WHERE status <> 'REMOVED' AND ip IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE install_runs (
        id uuid PRIMARY KEY,
        node_id uuid NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
        status text NOT NULL,
        agent_token_hash text,
        agent_token_expires_at timestamptz,
        start_step text NOT NULL DEFAULT 'PREFLIGHT',
        failed_step text,
        reason text,
        requested_by text NOT NULL,
        last_event_at timestamptz,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX install_runs_node ON install_runs (node_id, started_at)`);
    await queryRunner.query(`CREATE UNIQUE INDEX install_runs_token ON install_runs (agent_token_hash) WHERE agent_token_hash IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE step_events (
        id bigserial PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES install_runs(id) ON DELETE CASCADE,
        seq integer NOT NULL,
        step text NOT NULL,
        status text NOT NULL,
        progress integer,
        message text,
        detail jsonb,
        occurred_at timestamptz NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT step_events_run_seq UNIQUE (run_id, seq)
      )`);
    await queryRunner.query(`
      CREATE TABLE csr_decisions (
        id bigserial PRIMARY KEY,
        cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        csr_name text NOT NULL,
        node_id uuid REFERENCES nodes(id) ON DELETE SET NULL,
        decision text NOT NULL,
        actor text NOT NULL,
        reason text NOT NULL,
        checks jsonb NOT NULL DEFAULT '[]',
        decided_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX csr_decisions_cluster_csr ON csr_decisions (cluster_id, csr_name)`);
    await queryRunner.query(`
      CREATE TABLE audit_log (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        actor text NOT NULL,
        action text NOT NULL,
        target_type text NOT NULL,
        target_id text,
        result text NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}',
        request_id text
      )`);
    await queryRunner.query(`CREATE INDEX audit_log_at ON audit_log (at DESC)`);
    await queryRunner.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        username text NOT NULL,
        password_hash text NOT NULL,
        role text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_login_at timestamptz,
        CONSTRAINT users_username_unique UNIQUE (username)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['users', 'audit_log', 'csr_decisions', 'step_events', 'install_runs', 'nodes', 'clusters']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
