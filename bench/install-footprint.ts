/**
 * What installs cost the service while they run, and what each leaves in Postgres. One world of
 * the scale-out tests (kube-sim, lab hosts, the built API process on a fresh database of the
 * Postgres server): the cluster also holds 1,000 Ready Nodes, discovered into the inventory, and
 * 100 live `installProgress` subscriptions are open on them; then 5 lab hosts are added with one
 * addNodes and installed with one installBatch at once, until each node is JOINED.
 *
 * Figures: the API's peak RSS (/proc, sampled every 250 ms) and peak V8 heap (/metrics) while the
 * installs run, beside a bare Node process with express and one pg connection and beside the
 * API's own heap before the installs; Postgres rows and bytes per install run (every table of the
 * schema: count(*) and pg_total_relation_size, after minus before, over the hosts), beside the
 * step events the agents reported (one row each: the least a run must store) and the bytes of
 * the new rows' data alone (pg_column_size: no indexes, no free space in pages).
 *
 *   npx tsx bench/install-footprint.ts [nodes=1000] [subscriptions=100] [installs=5]
 *
 * Needs root (lab hosts) and the built API and agent (`npx nx run-many -t build -p api boot-worker`).
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import pg from 'pg';
// The world of the scale-out tests: kube-sim, lab hosts, the built API process (test support, not product code).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { AGENT_EXECUTABLE, type ScaleOutWorld, startScaleOutWorld } from '../test/support/scale-out-world';
import { baselineRss, heapUsed, subscribeInstallProgress } from './memory-at-size';
import { MANY_BROWSERS_ENV } from './support/api-world';
import { type BenchOptions, type Figure, RowUnavailable, isMain } from './support/row';

/** The API's memory outside the V8 heap (Buffers, ArrayBuffers), from its /metrics. */
async function externalMemory(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^nodejs_external_memory_bytes\s+(\S+)/m.exec(text)?.[1] ?? Number.NaN);
}

const MB = 1e6;

export interface FootprintFigures {
  readonly nodes: number;
  readonly subscriptions: number;
  readonly installs: number;
  readonly peakRss: number;
  readonly peakHeap: number;
  readonly heapBefore: number;
  readonly peakExternal: number;
  readonly baselineRss: number;
  readonly rowsPerRun: number;
  readonly eventsPerRun: number;
  readonly bytesPerRun: number;
  readonly dataBytesPerRun: number;
  /** Tables by bytes added per run, largest first. */
  readonly tables: ReadonlyArray<{ readonly table: string; readonly rows: number; readonly bytes: number }>;
}

/** The row of `npm run bench`. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const [nodes, subscriptions, installs] = options.smoke ? [20, 5, 1] : [1000, 100, 5];
  const result = await measureFootprint(nodes, subscriptions, installs, options.log);
  const top = result.tables
    .slice(0, 3)
    .map((table) => `${table.table} ${(table.bytes / 1000).toFixed(0)} kB`)
    .join(', ');
  return [
    {
      name: `API RSS peak, ${nodes} nodes + ${subscriptions} subscriptions + ${installs} installs running`,
      value: result.peakRss / MB,
      unit: 'MB',
      reference: { name: 'bare Node + express + pg', value: result.baselineRss / MB, measured: true },
      better: 'lower',
      goal: { on: 'value', atMost: 250, text: '≤ 250 MB' },
      note: `V8 heap peak ${(result.peakHeap / MB).toFixed(0)} MB, external (Buffers) peak ${(result.peakExternal / MB).toFixed(0)} MB`,
    },
    {
      name: `API V8 heap used peak, same`,
      value: result.peakHeap / MB,
      unit: 'MB',
      reference: { name: 'the API heap before the installs', value: result.heapBefore / MB, measured: true },
      better: 'lower',
    },
    {
      name: 'Postgres rows per install run (all tables)',
      value: result.rowsPerRun,
      unit: 'rows',
      reference: { name: 'step events the agent reported (one row each)', value: result.eventsPerRun, measured: true },
      better: 'lower',
    },
    {
      name: 'Postgres bytes per install run (pg_total_relation_size delta)',
      value: result.bytesPerRun / 1000,
      unit: 'kB',
      reference: { name: 'the new rows’ data alone (pg_column_size)', value: result.dataBytesPerRun / 1000, measured: true },
      better: 'lower',
      note: `largest: ${top}`,
    },
  ];
}

interface TableState {
  readonly rows: number;
  readonly bytes: number;
  readonly dataBytes: number;
}

/** Every table of the schema: rows, bytes on disk (with indexes and TOAST), bytes of the row data. */
async function snapshot(db: pg.Client): Promise<Map<string, TableState>> {
  const tables = (await db.query<{ name: string; bytes: string }>("SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY 1")).rows;
  const state = new Map<string, TableState>();
  for (const table of tables) {
    const quoted = `"${table.name.replace(/"/g, '""')}"`;
    const counted = (await db.query<{ rows: string; data: string }>(`SELECT count(*) AS rows, coalesce(sum(pg_column_size(t.*)), 0) AS data FROM ${quoted} t`)).rows[0];
    state.set(table.name, { rows: Number(counted?.rows ?? 0), bytes: Number(table.bytes), dataBytes: Number(counted?.data ?? 0) });
  }
  return state;
}

async function apiPid(port: number): Promise<number> {
  const stdout = await new Promise<string>((done, fail) => execFile('ss', ['-ltnpH', `sport = :${port}`], (error, out) => (error ? fail(error) : done(String(out)))));
  const pid = Number(/pid=(\d+)/.exec(stdout)?.[1]);
  if (!pid) {
    throw new Error('cannot find the API process');
  }
  return pid;
}

async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** 1,000 Ready Nodes in the world's cluster, until the inventory holds them all. */
async function seedNodes(world: ScaleOutWorld, db: pg.Client, nodes: number, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  for (let index = 0; index < nodes; index++) {
    world.sim.api.seed(world.sim.resource('nodes'), {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `worker-${String(index).padStart(5, '0')}`, labels: { 'node-role.kubernetes.io/worker': '' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `10.20.${Math.floor(index / 250)}.${(index % 250) + 2}` }] },
    });
  }
  for (let seen = 0; seen < nodes; await new Promise((wake) => setTimeout(wake, 250))) {
    seen = Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM nodes WHERE cluster_id = $1 AND hostname LIKE 'worker-%'", [world.clusterId])).rows[0]?.n ?? 0);
    if (Date.now() - started > 300_000) {
      throw new Error(`only ${seen} of ${nodes} Nodes discovered within 300 s`);
    }
  }
  log(`${nodes} Nodes discovered in ${Date.now() - started} ms`);
}

async function installAll(world: ScaleOutWorld, count: number): Promise<void> {
  const hosts = world.lab.hosts.slice(0, count);
  const added = await world.gql<{ addNodes: { batch: { id: string } | null } }>('mutation($input: AddNodesInput!) { addNodes(input: $input) { batch { id } } }', {
    input: { clusterId: world.clusterId, range: { range: `${hosts[0]?.ip}-${hosts[count - 1]?.ip}`, hostnamePattern: 'h{n}', firstNumber: 1 }, password: hosts[0]?.password },
  });
  const batchId = added.data?.addNodes.batch?.id;
  if (!batchId) {
    throw new Error(`addNodes failed: ${JSON.stringify(added.errors ?? added.data)}`);
  }
  const installed = await world.gql('mutation($id: ID!, $c: Int) { installBatch(batchId: $id, concurrency: $c) { id } }', { id: batchId, c: count });
  if (installed.errors) {
    throw new Error(JSON.stringify(installed.errors));
  }
  const started = Date.now();
  for (;;) {
    const batch = await world.gql<{ batch: { hosts: Array<{ nodeId: string | null }> } }>('query($id: ID!) { batch(id: $id) { hosts { nodeId } } }', { id: batchId });
    const ids = (batch.data?.batch.hosts ?? []).flatMap((host) => (host.nodeId ? [host.nodeId] : []));
    const statuses = await Promise.all(ids.map(async (id) => (await world.gql<{ node: { status: string; statusReason: string | null } }>('query($id: ID!) { node(id: $id) { status statusReason } }', { id })).data?.node));
    if (ids.length === count && statuses.every((node) => node?.status === 'JOINED')) {
      return;
    }
    const failed = statuses.find((node) => node && /FAILED|STALLED|UNREACHABLE|AUTH_FAILED/.test(node.status));
    if (failed || Date.now() - started > 15 * 60_000) {
      throw new Error(`installs did not all join: ${JSON.stringify(statuses)}\n${world.api.output().slice(-2000)}`);
    }
    await new Promise((wake) => setTimeout(wake, 500));
  }
}

export async function measureFootprint(nodes: number, subscriptions: number, installs: number, log: (line: string) => void): Promise<FootprintFigures> {
  await stat(AGENT_EXECUTABLE).catch(() => {
    throw new RowUnavailable(`${AGENT_EXECUTABLE} is missing: npx nx run-many -t build -p api boot-worker`);
  });
  if (process.getuid?.() !== 0) {
    throw new RowUnavailable('lab hosts need root');
  }
  const world = await startScaleOutWorld({ hosts: installs, name: 'bench/install-footprint', csrAutoApprove: true, apiEnv: { LOG_LEVEL: 'warn', SSH_POOL_SIZE: '20', BATCH_CONCURRENCY: '20', ...MANY_BROWSERS_ENV } });
  const databaseUrl = world.api.database?.url;
  if (!databaseUrl) {
    await world.stop();
    throw new Error('the API process has no database of its own');
  }
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const pid = await apiPid(world.api.port);
    await seedNodes(world, db, nodes, log);
    const clients = await subscribeInstallProgress(databaseUrl, world.api.url, world.token, world.clusterId, subscriptions);
    try {
      await new Promise((wake) => setTimeout(wake, 2000));
      const heapBefore = await heapUsed(world.api.url);
      const before = await snapshot(db);
      let peakRss = await rss(pid);
      let peakHeap = heapBefore;
      let peakExternal = await externalMemory(world.api.url);
      const rssSampler = setInterval(() => void rss(pid).then((bytes) => (peakRss = Math.max(peakRss, bytes))), 250);
      const heapSampler = setInterval(() => {
        void heapUsed(world.api.url).then((bytes) => (peakHeap = Math.max(peakHeap, Number.isFinite(bytes) ? bytes : 0)), () => undefined);
        void externalMemory(world.api.url).then((bytes) => (peakExternal = Math.max(peakExternal, Number.isFinite(bytes) ? bytes : 0)), () => undefined);
      }, 1000);
      const started = Date.now();
      try {
        await installAll(world, installs);
      } finally {
        clearInterval(rssSampler);
        clearInterval(heapSampler);
      }
      log(`${installs} installs joined in ${((Date.now() - started) / 1000).toFixed(1)} s; API RSS peak ${(peakRss / MB).toFixed(0)} MB, heap peak ${(peakHeap / MB).toFixed(0)} MB (before ${(heapBefore / MB).toFixed(0)} MB), external peak ${(peakExternal / MB).toFixed(0)} MB`);
      // Let the last events and heartbeats land before counting.
      await new Promise((wake) => setTimeout(wake, 2000));
      const after = await snapshot(db);
      const tables = [...after].map(([table, now]) => {
        const was = before.get(table) ?? { rows: 0, bytes: 0, dataBytes: 0 };
        return { table, rows: (now.rows - was.rows) / installs, bytes: (now.bytes - was.bytes) / installs, dataBytes: (now.dataBytes - was.dataBytes) / installs };
      });
      tables.sort((a, b) => b.bytes - a.bytes);
      const sum = (pick: (table: (typeof tables)[number]) => number) => tables.reduce((total, table) => total + pick(table), 0);
      const events = tables.find((table) => table.table === 'step_events')?.rows ?? Number.NaN;
      for (const table of tables.filter((entry) => entry.rows !== 0 || entry.bytes !== 0)) {
        log(`  per run: ${table.table.padEnd(28)} ${table.rows.toFixed(1).padStart(7)} rows ${(table.bytes / 1000).toFixed(1).padStart(8)} kB (data ${(table.dataBytes / 1000).toFixed(1)} kB)`);
      }
      const baseline = await baselineRss(databaseUrl);
      return {
        nodes,
        subscriptions,
        installs,
        peakRss,
        peakHeap,
        heapBefore,
        peakExternal,
        baselineRss: baseline,
        rowsPerRun: sum((table) => table.rows),
        eventsPerRun: events,
        bytesPerRun: sum((table) => table.bytes),
        dataBytesPerRun: sum((table) => table.dataBytes),
        tables: tables.map(({ table, rows, bytes }) => ({ table, rows, bytes })),
      };
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  } finally {
    await db.end();
    await world.stop();
  }
}

if (isMain(import.meta.url)) {
  const result = await measureFootprint(Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 100), Number(process.argv[4] ?? 5), (line) => console.log(line));
  console.log(JSON.stringify({ ...result, tables: result.tables.slice(0, 8) }));
  process.exit(0);
}
