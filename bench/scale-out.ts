/**
 * Scale-out: how the time to join grows with the number of hosts. For 1, 5, 10 and 20 lab
 * hosts added with one addNodes (a range, one shared password) and installed with one
 * installBatch at once (concurrency = the number of hosts), CSR auto-approve on: wall time
 * from the addNodes request to the last Node Ready in the cluster, per-step medians (from the
 * agents' step events; "add" is addNodes → the install run's start: connect, checks, agent copy),
 * bytes the machine sent to the hosts (their veth counters: SSH and the artifact downloads),
 * the agent bytes copied over SSH (the API's ccos_agent_copy_bytes_total: zstd streams and SFTP
 * copies), the API process's peak RSS, and how fast /healthz answers meanwhile (asked every
 * 200 ms from this process, which also runs kube-sim). Then the same 20 hosts'
 * worth installed one after another (concurrency 1). Prints the table and the ratios
 * T(20)/T(1) and T(20 serial)/T(20 parallel).
 *
 *   npx tsx bench/scale-out.ts [sizes=1,5,10,20] [serial=20] [cap|-] [workers=0]
 *
 * `cap` bounds the batch concurrency of the at-once rows (default, or `-`: the row's size), to
 * compare a bounded batch with an unbounded one. `workers` > 0 runs the service split in two roles:
 * one `SERVICE_ROLE=api` process and that many `SERVICE_ROLE=worker` processes on its database; the
 * CPU table then has a line for each role (the workers' agent copies included, so the API's
 * `ccos_agent_copy_bytes_total` stays 0).
 *
 * Needs root (lab hosts) and the built API and agent (`npx nx run-many -t build -p api boot-worker`).
 * One lab of 1+5+10+20+20 hosts (a /26), one kube-sim, one API process; each row uses fresh hosts.
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
// The world of the scale-out tests: kube-sim, lab hosts, the built API process (test support, not product code).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { AGENT_EXECUTABLE, type ScaleOutWorld, startScaleOutWorld } from '../test/support/scale-out-world';
import { CPU_CATEGORIES, CPU_CATEGORY_TEXT, type CpuAccounting, cpuDelta, startCpuAccounting } from './support/cpu-accounting';
import { type BenchOptions, type Figure, RowUnavailable, isMain } from './support/row';

const run = promisify(execFile);

interface Row {
  readonly label: string;
  readonly hosts: number;
  readonly wallMs: number;
  readonly stepMedians: Record<string, number>;
  readonly bytesToHosts: number;
  readonly agentBytes: number;
  readonly peakRssMb: number;
  /** /healthz answer times sampled every 200 ms while the row ran (from this process, which also runs kube-sim). */
  readonly healthzMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly samples: number };
  /** The API process's event-loop delay over the row (its own monitor, from /metrics). */
  readonly eventLoopMs: { readonly p99: number; readonly max: number };
  /** CPU-seconds of this run's processes over the row, by category (null without a cpuacct cgroup). */
  readonly cpu: ReturnType<typeof cpuDelta> | null;
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};

/** Asks /healthz every 200 ms (one request at a time) until stopped; returns the answer times. */
function sampleHealthz(url: string): { stop(): Promise<number[]> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(30_000) }).then((response) => response.ok, () => false);
      times.push(ok ? performance.now() - started : 30_000);
      await new Promise((wake) => setTimeout(wake, 200));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return times;
    },
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};

async function apiPid(port: number): Promise<number | null> {
  const { stdout } = await run('ss', ['-ltnpH', `sport = :${port}`]);
  const match = /pid=(\d+)/.exec(stdout);
  return match ? Number(match[1]) : null;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : 0;
}

async function txBytes(world: ScaleOutWorld, hostIds: readonly string[]): Promise<number> {
  let total = 0;
  for (const id of hostIds) {
    total += Number((await readFile(`/sys/class/net/cclab${world.lab.id}-${id}/statistics/tx_bytes`, 'utf8').catch(() => '0')).trim());
  }
  return total;
}

/** The API's own event-loop delay since the last scrape (prom-client resets its histogram on each), in ms. */
async function eventLoopDelay(world: ScaleOutWorld): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${world.api.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000;
  return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') };
}

/** Agent bytes the API sent over SSH so far (zstd streams and SFTP copies), from its /metrics. */
async function agentCopyBytes(world: ScaleOutWorld): Promise<number> {
  const text = await (await fetch(`${world.api.url}/metrics`)).text();
  return [...text.matchAll(/^ccos_agent_copy_bytes_total\{method="[a-z]+"\} (\d+(?:\.\d+)?(?:e\+\d+)?)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

function readyNodes(world: ScaleOutWorld, names: ReadonlySet<string>): number {
  const nodes = world.sim.store.list(world.sim.resource('nodes')) as unknown as Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string; status: string }> } }>;
  return nodes.filter((node) => names.has(node.metadata.name) && node.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True')).length;
}

async function measure(world: ScaleOutWorld, label: string, first: number, count: number, concurrency: number, pid: number, cpu: CpuAccounting | null): Promise<Row> {
  const cpuBefore = await cpu?.read();
  const hosts = world.lab.hosts.slice(first, first + count);
  const names = new Set(hosts.map((host) => host.hostname));
  const bytesBefore = await txBytes(world, hosts.map((host) => host.id));
  const agentBytesBefore = await agentCopyBytes(world);
  await eventLoopDelay(world);
  let peak = await rssMb(pid);
  const sampler = setInterval(() => void rssMb(pid).then((mb) => (peak = Math.max(peak, mb))), 250);
  const healthz = sampleHealthz(world.api.url);
  const started = Date.now();
  const added = await world.gql<{ addNodes: { batch: { id: string } | null; rows: Array<{ problems: unknown[] }> } }>(
    'mutation($input: AddNodesInput!) { addNodes(input: $input) { batch { id } rows { problems { message } } } }',
    { input: { clusterId: world.clusterId, range: { range: `${hosts[0].ip}-${hosts[count - 1].ip}`, hostnamePattern: 'h{n}', firstNumber: first + 1 }, password: hosts[0].password } },
  );
  const batchId = added.data?.addNodes.batch?.id;
  if (!batchId) {
    throw new Error(`addNodes failed: ${JSON.stringify(added.errors ?? added.data)}`);
  }
  const installed = await world.gql('mutation($id: ID!, $c: Int) { installBatch(batchId: $id, concurrency: $c) { id } }', { id: batchId, c: concurrency });
  if (installed.errors) {
    throw new Error(JSON.stringify(installed.errors));
  }
  while (readyNodes(world, names) < count) {
    if (Date.now() - started > 30 * 60_000) {
      throw new Error(`${label}: not every Node Ready after 30 min`);
    }
    await new Promise((wake) => setTimeout(wake, 100));
  }
  const wallMs = Date.now() - started;
  const cpuAfter = await cpu?.read();
  clearInterval(sampler);
  const healthzTimes = await healthz.stop();
  const loop = await eventLoopDelay(world);
  const bytesToHosts = (await txBytes(world, hosts.map((host) => host.id))) - bytesBefore;
  const agentBytes = (await agentCopyBytes(world)) - agentBytesBefore;
  const batch = await world.gql<{ batch: { hosts: Array<{ nodeId: string }> } }>('query($id: ID!) { batch(id: $id) { hosts { nodeId } } }', { id: batchId });
  const durations: Record<string, number[]> = { add: [] };
  for (const { nodeId } of batch.data?.batch.hosts ?? []) {
    const node = await world.gql<{ node: { createdAt: string; installRuns: Array<{ startedAt: string; events: Array<{ step: string; status: string; occurredAt: string }> }> } }>(
      'query($id: ID!) { node(id: $id) { createdAt installRuns { startedAt events { step status occurredAt } } } }',
      { id: nodeId },
    );
    const runs = node.data?.node.installRuns ?? [];
    if (runs[0]) {
      durations['add'].push(Date.parse(runs[0].startedAt) - Date.parse(node.data?.node.createdAt ?? runs[0].startedAt));
    }
    const started = new Map<string, number>();
    for (const event of runs.at(-1)?.events ?? []) {
      if (event.status === 'STARTED') {
        started.set(event.step, Date.parse(event.occurredAt));
      } else if (event.status === 'SUCCEEDED' && started.has(event.step)) {
        (durations[event.step] ??= []).push(Date.parse(event.occurredAt) - (started.get(event.step) ?? 0));
      }
    }
  }
  const stepMedians = Object.fromEntries(Object.entries(durations).map(([step, values]) => [step, median(values)]));
  return {
    label,
    hosts: count,
    wallMs,
    stepMedians,
    bytesToHosts,
    agentBytes,
    peakRssMb: peak,
    eventLoopMs: loop,
    cpu: cpuBefore && cpuAfter ? cpuDelta(cpuBefore, cpuAfter) : null,
    healthzMs: { p50: quantile(healthzTimes, 0.5), p99: quantile(healthzTimes, 0.99), max: Math.max(...healthzTimes), samples: healthzTimes.length },
  };
}

/** AGENT_CPU_PROFILE_DIR of this process, for the API: each agent then writes its CPU profile there (the hosts see this machine's folders outside their own mounts). */
function agentCpuProfile(): Record<string, string> {
  const folder = process.env['AGENT_CPU_PROFILE_DIR'];
  return folder ? { AGENT_CPU_PROFILE_DIR: folder } : {};
}

/** Each size installed at once, then `serial` hosts one after another, on fresh hosts of one lab. */
async function measureAll(sizes: readonly number[], serial: number, log: (line: string) => void, cap = Number.POSITIVE_INFINITY, workers = 0): Promise<Row[]> {
  const total = sizes.reduce((sum, size) => sum + size, 0) + serial;
  await stat(AGENT_EXECUTABLE).catch(() => {
    throw new RowUnavailable(`${AGENT_EXECUTABLE} is missing: npx nx run-many -t build -p api boot-worker`);
  });
  const names: { database?: string } = {};
  // CPU-seconds by category (needs root and a cpuacct cgroup hierarchy; without them, no CPU figures).
  const cpu = await startCpuAccounting(() => names.database).catch((error: unknown) => {
    log(`scale-out: no CPU accounting (${error instanceof Error ? error.message : String(error)})`);
    return null;
  });
  const roles: Record<string, string> = workers > 0 ? { SERVICE_ROLE: 'api' } : {};
  const world = await startScaleOutWorld({ hosts: total, name: 'bench-scale-out', csrAutoApprove: true, apiEnv: { SSH_POOL_SIZE: '20', BATCH_CONCURRENCY: '20', LOG_LEVEL: 'warn', ...roles, ...agentCpuProfile() } }).catch(async (error: unknown) => {
    await cpu?.stop();
    throw error;
  });
  names.database = world.api.database?.name;
  const rows: Row[] = [];
  try {
    for (let index = 0; index < workers; index++) {
      await world.startReplica({ SERVICE_ROLE: 'worker' });
    }
    const pid = await apiPid(world.api.port);
    if (!pid) {
      throw new Error('cannot find the API process');
    }
    let next = 0;
    for (const size of sizes) {
      rows.push(await measure(world, `${size} at once`, next, size, Math.min(size, cap), pid, cpu));
      next += size;
      log(`scale-out: ${rows.at(-1)?.label} in ${((rows.at(-1)?.wallMs ?? 0) / 1000).toFixed(1)} s`);
    }
    if (serial > 0) {
      rows.push(await measure(world, `${serial} one after another`, next, serial, 1, pid, cpu));
      log(`scale-out: ${rows.at(-1)?.label} in ${((rows.at(-1)?.wallMs ?? 0) / 1000).toFixed(1)} s`);
    }
  } finally {
    await world.stop();
    await cpu?.stop();
  }
  return rows;
}

/** For `npm run bench`: each size's wall time beside one host's, and serial beside parallel. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const sizes = options.smoke ? [1, 2] : [1, 5, 10, 20];
  const serial = options.smoke ? 2 : 20;
  const rows = await measureAll(sizes, serial, options.log);
  const wall = (label: string) => rows.find((row) => row.label === label)?.wallMs ?? Number.NaN;
  const one = wall('1 at once');
  const largest = Math.max(...sizes);
  const figures: Figure[] = sizes.slice(1).map((size) => ({
    name: `${size} hosts added and installed at once, to the last Node Ready`,
    value: wall(`${size} at once`) / 1000,
    unit: 's',
    reference: { name: '1 host, same run', value: one / 1000, measured: true },
    better: 'lower' as const,
    ...(size === 20 ? { goal: { on: 'ratio' as const, atMost: 2, text: 'T(20) / T(1) ≤ 2.0' } } : {}),
    note: `slowest step median: ${slowestStep(rows.find((row) => row.label === `${size} at once`))}`,
  }));
  figures.push({
    name: `${serial} hosts one after another, beside the same number at once`,
    value: wall(`${serial} one after another`) / 1000,
    unit: 's',
    reference: { name: `${serial} at once, same run`, value: wall(`${largest} at once`) / 1000, measured: true },
    better: 'higher',
    goal: { on: 'ratio', atLeast: 8, text: 'T(20 serial) / T(20 parallel) ≥ 8' },
  });
  return figures;
}

function slowestStep(row: Row | undefined): string {
  const [step, ms] = Object.entries(row?.stepMedians ?? {}).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
  return `${step} ${(ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  const sizes = (process.argv[2] ?? '1,5,10,20').split(',').map(Number);
  const serial = Number(process.argv[3] ?? 20);
  const cap = process.argv[4] && process.argv[4] !== '-' ? Number(process.argv[4]) : Number.POSITIVE_INFINITY;
  const workers = Number(process.argv[5] ?? 0);
  const rows = await measureAll(sizes, serial, (line) => console.error(line), cap, workers);
  const steps = [...new Set(rows.flatMap((row) => Object.keys(row.stepMedians)))];
  const header = ['row', 'wall s', ...steps.map((step) => `${step} med s`), 'MiB to hosts', 'agent MiB over SSH', 'peak API RSS MiB', '/healthz p50 / p99 / max ms', 'API event loop delay p99 / max ms'];
  console.log(header.join(' | '));
  for (const row of rows) {
    console.log([row.label, (row.wallMs / 1000).toFixed(1), ...steps.map((step) => ((row.stepMedians[step] ?? Number.NaN) / 1000).toFixed(1)), (row.bytesToHosts / 2 ** 20).toFixed(0), (row.agentBytes / 2 ** 20).toFixed(0), row.peakRssMb.toFixed(0), `${row.healthzMs.p50.toFixed(0)} / ${row.healthzMs.p99.toFixed(0)} / ${row.healthzMs.max.toFixed(0)} (${row.healthzMs.samples})`, `${row.eventLoopMs.p99.toFixed(0)} / ${row.eventLoopMs.max.toFixed(0)}`].join(' | '));
  }
  if (rows.some((row) => row.cpu)) {
    console.log('');
    console.log(['CPU-s', ...rows.map((row) => row.label)].join(' | '));
    for (const category of [...CPU_CATEGORIES, 'total'] as const) {
      const text = category === 'total' ? 'total' : CPU_CATEGORY_TEXT[category];
      console.log([text, ...rows.map((row) => (row.cpu ? row.cpu[category].toFixed(1) : '-'))].join(' | '));
    }
    console.log(['total per host', ...rows.map((row) => (row.cpu ? (row.cpu.total / row.hosts).toFixed(2) : '-'))].join(' | '));
  }
  const wall = (label: string) => rows.find((row) => row.label === label)?.wallMs ?? Number.NaN;
  const largest = Math.max(...sizes);
  console.log(`T(${largest})/T(${Math.min(...sizes)}) = ${(wall(`${largest} at once`) / wall(`${Math.min(...sizes)} at once`)).toFixed(2)}`);
  if (serial > 0 && sizes.includes(serial)) {
    console.log(`T(${serial} serial)/T(${serial} parallel) = ${(wall(`${serial} one after another`) / wall(`${serial} at once`)).toFixed(2)}`);
  }
}

if (isMain(import.meta.url)) {
  await main();
}
