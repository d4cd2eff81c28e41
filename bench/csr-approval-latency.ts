/**
 * CSR approval latency of the watch-based auto-approver, next to the seed's alternative (b): a
 * cronjob that approves every pending CSR every N minutes (the Red Hat solution the seed cites,
 * https://access.redhat.com/solutions/6270481; typical schedules are every 5 minutes, some 30).
 *
 * Real Postgres (a fresh database), kube-sim in its own process (as an API server is; with
 * `--in-process` it shares this process and its CPU), the CSR feature with its default Lease timings. 100 inventory nodes are put at START_KUBELET, each install run with a bootstrap
 * identity of its own (a ServiceAccount token, as the service mints them); for each one a kubelet-style client
 * CSR is created with its run's token and the time until a separate watch
 * sees its Approved condition is measured (kube-sim's creationTimestamp has one-second
 * resolution, so both ends are timed here). Two runs: one CSR at a time (what an install sees) and
 * all at once (a burst, e.g. a rack joining). The burst's kubelets file their CSRs from a process
 * of their own (bench/support/csr-creators.ts), each on its own connection, so their TLS and
 * requests are neither counted as the approver's CPU nor wait on its event loop; the burst is timed
 * from each CSR's send and from its creation (the create call answered: what the approver itself
 * takes), and the CPU each process spent per CSR is printed beside it.
 *
 *   npx tsx bench/csr-approval-latency.ts [cronMinutes=5] [csrs=100] [--in-process]
 *
 * Prints figures; not part of the test suite.
 */
import 'reflect-metadata';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import pino from 'pino';
import { parse } from 'yaml';
import {
  BOOTSTRAPPER_TOKEN, BOOTSTRAPPER_TOKEN_LINE, CSR_TEST_SEED, type SimEndpoint, createCsrReplica, startCsrTestWorld, startInProcessSim,
} from '@ccos/api/feature-csrs/testing';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { eventually } from '@ccos/shared/util-timing/testing';
import { buildKubeconfig, generateCertificateRequest } from '@ccos/tools/kube-sim';
import { type BenchOptions, type Figure, isMain, percentile } from './support/row';

/** The row of `npm run bench`: p50/p99 one CSR at a time (spread) and in a burst, beside a 5-minute approve-all cronjob. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const count = options.smoke ? 5 : 500;
  const cronMinutes = 5;
  const { sequential, burst, burstCreated } = await measureCsrLatency({ cronMinutes, count, inProcess: false }, options.log);
  const cron = { name: `${cronMinutes}-min approve-all cronjob, mean (N/2)`, value: (cronMinutes * 60_000) / 2, measured: false };
  const figure = (name: string, value: number, goal?: Figure['goal']): Figure => ({ name, value, unit: 'ms', reference: cron, better: 'lower', ...(goal ? { goal } : {}) });
  return [
    figure(`CSR → Approved p50, ${count} spread`, percentile(sequential, 50)),
    figure(`CSR → Approved p99, ${count} spread`, percentile(sequential, 99), { on: 'value', atMost: 1000, text: 'p99 ≤ 1 s' }),
    figure(`CSR → Approved p50, ${count} in a burst`, percentile(burst, 50)),
    figure(`CSR → Approved p99, ${count} in a burst`, percentile(burst, 99)),
    // From the moment each CSR exists: what the approver takes, without the API server's own queue of creations.
    figure(`CSR created → Approved p99, ${count} in a burst`, percentile(burstCreated, 99), { on: 'value', atMost: 2000, text: 'p99 ≤ 2 s' }),
  ];
}

/** kube-sim as its own process (`npm run kube-sim`), with the node-bootstrapper token. */
async function startChildSim(): Promise<SimEndpoint> {
  const dir = await mkdtemp(join(tmpdir(), 'csr-bench-'));
  const tokens = join(dir, 'tokens.csv');
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  await writeFile(tokens, `${BOOTSTRAPPER_TOKEN_LINE}\n`);
  const seed = join(dir, 'seed.yaml');
  await writeFile(seed, CSR_TEST_SEED);
  const child = spawn(process.execPath, ['--import', 'tsx', 'tools/kube-sim/src/main.ts', '--port', '0', '--token-auth-file', tokens, '--kubeconfig-out', kubeconfigPath, '--seed', seed], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [url] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const kubeconfig = await readFile(kubeconfigPath, 'utf8');
  simChild = child;
  return {
    url,
    kubeconfig,
    bootstrapperKubeconfig: buildKubeconfig({ server: url, caCertPem: caOf(kubeconfig), credentials: { token: BOOTSTRAPPER_TOKEN } }),
    async stop() {
      simChild = null;
      child.kill('SIGTERM');
      await once(child, 'exit');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function ms(value: number): string {
  return value >= 10_000 ? `${Math.round(value).toLocaleString('en-US')} ms` : `${value.toFixed(1)} ms`;
}

/** CPU-milliseconds spent during the burst, from when the kubelets file their CSRs until every one is approved. */
interface BurstCpu {
  /** This process: the approver (and the observing watch). */
  readonly approverMs: number;
  readonly creatorsMs: number;
  /** Null when kube-sim runs in this process. */
  readonly simMs: number | null;
}

const epochMs = (): number => performance.timeOrigin + performance.now();

function caOf(kubeconfig: string): string {
  const ca = (parse(kubeconfig) as { clusters: Array<{ cluster: { 'certificate-authority-data': string } }> }).clusters[0].cluster['certificate-authority-data'];
  return Buffer.from(ca, 'base64').toString('utf8');
}

let simChild: ChildProcess | null = null;

/** kube-sim's CPU-seconds so far, from /proc, when it runs in its own process. */
function simCpuSeconds(): number | null {
  if (!simChild?.pid) {
    return null;
  }
  const fields = readFileSync(`/proc/${simChild.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (USER_HZ 100).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The kubelets' burst, filed by bench/support/csr-creators.ts in a process of its own. */
async function fileInAnotherProcess(
  url: string,
  caPem: string,
  requests: ReadonlyArray<{ token: string; csrPem: string }>,
): Promise<{ csrs: Array<{ name: string; sentAt: number; createdAt: number }>; cpuMs: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/support/csr-creators.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(JSON.stringify({ url, caPem, requests }));
  const csrs: Array<{ name: string; sentAt: number; createdAt: number }> = [];
  let cpuMs = Number.NaN;
  for await (const line of createInterface({ input: child.stdout })) {
    const answer = JSON.parse(line) as { name?: string; sentAt?: number; createdAt?: number; cpuMs?: number };
    if (answer.cpuMs !== undefined) {
      cpuMs = answer.cpuMs;
    } else if (answer.name && answer.sentAt !== undefined && answer.createdAt !== undefined) {
      csrs.push({ name: answer.name, sentAt: answer.sentAt, createdAt: answer.createdAt });
    }
  }
  const [code] = (await once(child, 'exit').catch(() => [null])) as [number | null];
  if (csrs.length !== requests.length) {
    throw new Error(`the CSR creators filed ${csrs.length} of ${requests.length} CSRs (exit ${code})`);
  }
  return { csrs, cpuMs };
}

async function measureCsrLatency(
  { cronMinutes: CRON_MINUTES, count: COUNT, inProcess: IN_PROCESS }: { cronMinutes: number; count: number; inProcess: boolean },
  log: (line: string) => void,
): Promise<{ sequential: number[]; burst: number[]; burstCreated: number[]; burstCpu: BurstCpu | null }> {
  const world = await startCsrTestWorld({ autoApprove: true, sim: IN_PROCESS ? await startInProcessSim() : await startChildSim() });
  const events = createInProcessEventBus();
  const feature = createCsrReplica(world, { events, logger: pino({ level: 'silent' }) });
  const approvedAt = new Map<string, number>();
  const stopWatch = new AbortController();
  try {
    await feature.start();
    await eventually(() => (feature.autoApprover.isLeading(world.clusterId) ? true : undefined), 20_000, 'leadership');
    // An observer separate from the approver: the time a kubelet polling its CSR would see it approved.
    const watching = world.admin.watch(
      '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      { resourceVersion: '0' },
      (_type, object) => {
        const csr = object as { metadata?: { name?: string }; status?: { conditions?: Array<{ type?: string }> } };
        const name = csr.metadata?.name;
        if (name && !approvedAt.has(name) && csr.status?.conditions?.some((condition) => condition.type === 'Approved')) {
          approvedAt.set(name, epochMs());
        }
      },
      stopWatch.signal,
    );

    const run = async (label: string, prefix: string, concurrent: boolean): Promise<{ fromSent: number[]; fromCreated: number[]; cpu: BurstCpu | null }> => {
      for (let index = 0; index < COUNT; index += 1) {
        await world.addInstallingNode(`${prefix}-${index}`, `198.18.${prefix === 'seq' ? 1 : 2}.${index + 1}`);
      }
      // Keys and requests are made beforehand: their CPU is the kubelets', not the approver's.
      const requests = await Promise.all(
        Array.from({ length: COUNT }, async (_, index) => (await generateCertificateRequest({ commonName: `system:node:${prefix}-${index}`, organizations: ['system:nodes'] })).csrPem),
      );
      const sent = new Map<string, number>();
      const created = new Map<string, number>();
      let cpu: BurstCpu | null = null;
      if (concurrent) {
        const tokens = Array.from({ length: COUNT }, (_, index) => world.identityOf(`${prefix}-${index}`)?.token ?? '');
        const simBefore = simCpuSeconds();
        const approverBefore = process.cpuUsage();
        const filed = await fileInAnotherProcess(world.sim.url, caOf(world.sim.kubeconfig), tokens.map((token, index) => ({ token, csrPem: requests[index] })));
        for (const csr of filed.csrs) {
          sent.set(csr.name, csr.sentAt);
          created.set(csr.name, csr.createdAt);
        }
        await eventually(() => ([...sent.keys()].every((name) => approvedAt.has(name)) ? true : undefined), 60_000, 'all approved');
        const approver = process.cpuUsage(approverBefore);
        const simAfter = simCpuSeconds();
        cpu = {
          approverMs: (approver.user + approver.system) / 1000,
          creatorsMs: filed.cpuMs,
          simMs: simBefore === null || simAfter === null ? null : (simAfter - simBefore) * 1000,
        };
      } else {
        for (let index = 0; index < COUNT; index += 1) {
          const { name, sentAt, createdAt } = await world.createCsr({ commonName: `system:node:${prefix}-${index}`, csrPem: requests[index] });
          sent.set(name, performance.timeOrigin + sentAt);
          created.set(name, performance.timeOrigin + createdAt);
          await eventually(() => (approvedAt.has(name) ? true : undefined), 10_000, `${name} approved`);
        }
      }
      const since = (from: Map<string, number>): number[] => [...from].map(([name, at]) => (approvedAt.get(name) ?? Number.NaN) - at).sort((a, b) => a - b);
      const line = (text: string, latencies: number[]): void =>
        log(`  ${text.padEnd(44)} p50 ${ms(percentile(latencies, 50)).padStart(9)}   p99 ${ms(percentile(latencies, 99)).padStart(9)}   max ${ms(latencies[latencies.length - 1]).padStart(9)}`);
      const fromSent = since(sent);
      const fromCreated = since(created);
      line(`${label}, sent →`, fromSent);
      // What the approver takes: from the moment the CSR exists (the create call answered) to its approval.
      line(`${label}, created →`, fromCreated);
      if (cpu) {
        const perCsr = (valueMs: number | null): string => (valueMs === null ? 'n/a (in this process)' : `${(valueMs / COUNT).toFixed(2)} ms`);
        log(`  CPU per CSR during the burst: approver process ${perCsr(cpu.approverMs)}, kube-sim ${perCsr(cpu.simMs)}, kubelets (creators) ${perCsr(cpu.creatorsMs)}`);
      }
      return { fromSent, fromCreated, cpu };
    };

    log(
      `CSR approval latency, creation → Approved condition (${COUNT} kubelet client CSRs, kube-sim ${IN_PROCESS ? 'in this process' : 'in its own process'}, Postgres, default Lease timings)`,
    );
    const sequential = (await run(`one CSR at a time (${COUNT})`, 'seq', false)).fromSent;
    const { fromSent: burst, fromCreated: burstCreated, cpu: burstCpu } = await run(`all ${COUNT} created at once`, 'burst', true);

    const cronAverage = (CRON_MINUTES * 60_000) / 2;
    const cronWorst = CRON_MINUTES * 60_000;
    log('');
    log(`  cronjob approving every ${CRON_MINUTES} min:   expected average latency ${ms(cronAverage)} (N/2), worst ${ms(cronWorst)} (N)`);
    const p50 = percentile(sequential, 50);
    const p99 = percentile(sequential, 99);
    log(`  ratio cronjob average / auto-approver p50: ${Math.round(cronAverage / p50).toLocaleString('en-US')}×   (cronjob worst / p99: ${Math.round(cronWorst / p99).toLocaleString('en-US')}×)`);
    log(`  burst: cronjob average / p50 ${Math.round(cronAverage / percentile(burst, 50)).toLocaleString('en-US')}×, p99 ${ms(percentile(burst, 99))}`);
    log('  (and the cronjob approves every pending CSR, forged SANs included; the auto-approver only those passing every policy check)');
    stopWatch.abort();
    await watching;
    return { sequential, burst, burstCreated, burstCpu };
  } finally {
    stopWatch.abort();
    await feature.stop();
    await world.stop();
  }
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  await measureCsrLatency({ cronMinutes: Number(args[0] ?? 5), count: Number(args[1] ?? 100), inProcess: process.argv.includes('--in-process') }, (line) => console.log(line));
}
