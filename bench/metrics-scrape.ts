/**
 * What a Prometheus scrape of /metrics costs once the domain gauges read Postgres (installs in
 * progress by step, nodes by status, removals by phase) at scrape time. The built API on a fresh
 * database of the Postgres server at 127.0.0.1:5432 is scraped 100 times in a row empty, then
 * again after seeding `nodes` nodes with one install run each (a tenth still running) and 30 step
 * events per run; prints p50, p95 and the largest of each, and the exposition's size.
 *
 *   npx tsx bench/metrics-scrape.ts [nodes=5000] [bundle=dist/apps/api/main.js]
 *
 * Build first (`npx nx run api:build`). Prints figures; not part of the test suite.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { startBuiltApi } from './support/built-api';

const NODES = Number(process.argv[2] ?? 5000);
const BUNDLE = process.argv[3] ?? 'dist/apps/api/main.js';
const SCRAPES = 100;
const STEPS = ['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET'];

async function scrapes(url: string): Promise<{ p50: number; p95: number; max: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let index = 0; index < SCRAPES; index += 1) {
    const started = performance.now();
    const text = await (await fetch(`${url}/metrics`)).text();
    times.push(performance.now() - started);
    bytes = Buffer.byteLength(text);
  }
  times.sort((a, b) => a - b);
  const at = (share: number) => times[Math.min(times.length - 1, Math.floor(share * times.length))] ?? 0;
  return { p50: at(0.5), p95: at(0.95), max: times.at(-1) ?? 0, bytes };
}

/** `nodes` nodes in one cluster, one run each (every tenth RUNNING), 30 step events per run. */
async function seed(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const clusterId = randomUUID();
    await client.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'bench', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`, [clusterId]);
    for (let first = 0; first < NODES; first += 500) {
      const ids = Array.from({ length: Math.min(500, NODES - first) }, (_, offset) => ({ node: randomUUID(), run: randomUUID(), index: first + offset }));
      await client.query(
        `INSERT INTO nodes (id, cluster_id, hostname, ip, status)
         SELECT n.id, $1, 'w' || n.i, '10.' || (n.i / 65536) || '.' || ((n.i / 256) % 256) || '.' || (n.i % 256), CASE WHEN n.i % 10 = 0 THEN 'INSTALLING' ELSE 'JOINED' END
           FROM unnest($2::uuid[], $3::int[]) AS n(id, i)`,
        [clusterId, ids.map((id) => id.node), ids.map((id) => id.index)],
      );
      await client.query(
        `INSERT INTO install_runs (id, node_id, status, requested_by, deadline_at, agent_launched_at)
         SELECT r.id, r.node, CASE WHEN r.i % 10 = 0 THEN 'RUNNING' ELSE 'SUCCEEDED' END, 'bench', now() + interval '2 hours', now()
           FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS r(id, node, i)`,
        [ids.map((id) => id.run), ids.map((id) => id.node), ids.map((id) => id.index)],
      );
      await client.query(
        `INSERT INTO step_events (run_id, seq, step, status, occurred_at)
         SELECT r.id, s.seq, ($2::text[])[1 + ((s.seq - 1) / 5) % 6], CASE WHEN s.seq % 5 = 1 THEN 'STARTED' WHEN s.seq % 5 = 0 THEN 'SUCCEEDED' ELSE 'PROGRESS' END, now()
           FROM unnest($1::uuid[]) AS r(id), generate_series(1, 30) AS s(seq)`,
        [ids.map((id) => id.run), STEPS],
      );
    }
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-metrics-'));
  const database = await createTestDatabase('ccos_bench');
  const api = await startBuiltApi({ DATABASE_URL: database.url, SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop', ADMIN_PASSWORD: 'bench-admin-password', DATA_DIR: dir, LOG_LEVEL: 'warn' }, { bundle: BUNDLE });
  try {
    const empty = await scrapes(api.url);
    const seeding = performance.now();
    await seed(database.url);
    const seeded = Math.round(performance.now() - seeding);
    const full = await scrapes(api.url);
    const row = (name: string, figures: typeof empty) => `${name.padEnd(34)} p50 ${figures.p50.toFixed(1)} ms  p95 ${figures.p95.toFixed(1)} ms  max ${figures.max.toFixed(1)} ms  ${figures.bytes} bytes`;
    console.log(`/metrics, ${SCRAPES} scrapes in a row each`);
    console.log(row('empty database', empty));
    console.log(row(`${NODES} nodes, ${NODES * 30} step events`, full));
    console.log(`(seeding took ${seeded} ms)`);
  } finally {
    await api.close();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
