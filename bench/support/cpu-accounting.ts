/**
 * CPU-seconds of a bench's own processes, by category, from a cpuacct cgroup (Linux, cgroup v1,
 * root). The bench process moves itself into a cgroup of its own, so everything it starts (the
 * API, the lab's sshd and whatever runs on the hosts) is counted there, and nothing another
 * process on the machine runs. A watcher moves each new process into the cgroup of its category
 * (by its command line) every few milliseconds; its later children start there. What a process
 * ran before it was moved, and commands that end sooner, count in their parent's category.
 * The shared Postgres server's backends are outside the cgroup: they are sampled from /proc
 * (utime + stime) by the database name in their command line.
 *
 * Much less sensitive to other work on the machine than wall time: a figure grows with load
 * only through cache misses and the like, not through waiting.
 */
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

const ROOT = '/sys/fs/cgroup/cpuacct';

/** Categories, in the order a table prints them; `bench` is the bench process and anything not classified. */
export const CPU_CATEGORIES = ['agent', 'api', 'worker', 'postgres', 'ssh-commands', 'zstd-sha256', 'agent-commands', 'kubelet', 'sshd', 'lab-daemon', 'bench'] as const;
export type CpuCategory = (typeof CPU_CATEGORIES)[number];

export const CPU_CATEGORY_TEXT: Record<CpuCategory, string> = {
  agent: 'agent (boot-worker run)',
  api: 'API process',
  worker: 'worker processes (SERVICE_ROLE=worker)',
  postgres: "postgres (the run's database)",
  'ssh-commands': 'commands run over SSH (shells, checks)',
  'zstd-sha256': 'zstd / sha256sum / openssl (agent copy)',
  'agent-commands': 'commands the agent ran (dnf, rpm, ...)',
  kubelet: 'kubelet stand-ins',
  sshd: 'sshd',
  'lab-daemon': 'lab daemon (VIP services)',
  bench: 'bench process (kube-sim) and the rest',
};

const TICK = 100; // USER_HZ on Linux

/** The built service's bundle in a command line. */
const SERVICE_BUNDLE = /dist\/apps\/api\/main\.js$/;
const runsService = (argv: readonly string[]) => argv.some((arg) => SERVICE_BUNDLE.test(arg));

/** The category of a process from its command line, its parent's category and, for the service, its `SERVICE_ROLE`. */
export function categoryOf(argv: readonly string[], parent: CpuCategory | undefined, serviceRole?: string): CpuCategory | undefined {
  const [first = '', second = ''] = argv;
  const program = basename(first);
  const script = basename(second);
  if (program === 'boot-worker' || script === 'boot-worker' || script === 'boot-worker.cjs') {
    return 'agent';
  }
  if (/sshd/.test(program) || first.startsWith('sshd')) {
    return 'sshd';
  }
  if (program === 'zstd' || program === 'sha256sum' || program === 'unzstd' || program === 'openssl') {
    return 'zstd-sha256';
  }
  if (script === 'kubelet' || program === 'kubelet') {
    return 'kubelet';
  }
  if (script === 'lab-daemon.cjs') {
    return 'lab-daemon';
  }
  if (runsService(argv)) {
    return serviceRole === 'worker' ? 'worker' : 'api';
  }
  if (parent === 'sshd' || parent === 'ssh-commands') {
    return 'ssh-commands';
  }
  if (parent === 'agent' || parent === 'agent-commands') {
    return 'agent-commands';
  }
  return undefined;
}

export interface CpuAccounting {
  /** CPU-seconds by category since start. */
  read(): Promise<Record<CpuCategory, number>>;
  /** Stops watching and removes the cgroups (the bench process goes back to the root). */
  stop(): Promise<void>;
}

/**
 * Starts accounting for this process and all it starts. `database` is a function because the
 * database is created after the accounting starts; its backends are matched by name.
 */
export async function startCpuAccounting(database: () => string | undefined, intervalMs = 20): Promise<CpuAccounting> {
  const base = `${ROOT}/ccos-bench-${process.pid}`;
  await mkdir(base, { recursive: true });
  for (const category of CPU_CATEGORIES) {
    await mkdir(`${base}/${category}`, { recursive: true });
  }
  await writeFile(`${base}/bench/cgroup.procs`, String(process.pid));
  const known = new Map<number, CpuCategory>();
  const commands = new Map<number, string>(); // pid → comm when last classified (an exec changes it)
  const notPostgres = new Set<number>();
  let lastPostgresSweep = 0;
  const postgres = new Map<number, number>(); // pid → last utime+stime ticks
  let postgresTicks = 0;
  let running = true;

  const argvOf = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
  const serviceRoleOf = async (pid: number) => /(?:^|\0)SERVICE_ROLE=([^\0]*)/.exec(await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''))?.[1];
  const parentOf = async (pid: number) => Number(/\) \S+ (\d+)/.exec(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''))?.[1] ?? 0);

  async function sweep(): Promise<void> {
    for (const current of CPU_CATEGORIES) {
      const pids = (await readFile(`${base}/${current}/cgroup.procs`, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
      for (const pid of pids) {
        if (pid === process.pid) {
          continue;
        }
        const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
        if (commands.get(pid) === comm && known.get(pid) === current) {
          continue;
        }
        commands.set(pid, comm);
        const argv = await argvOf(pid);
        const parent = known.get(await parentOf(pid)) ?? (current === 'bench' ? undefined : current);
        const category = categoryOf(argv, parent, runsService(argv) ? await serviceRoleOf(pid) : undefined) ?? current;
        if (category !== current) {
          await writeFile(`${base}/${category}/cgroup.procs`, String(pid)).catch(() => undefined);
        }
        known.set(pid, category);
      }
    }
    const name = database();
    if (name && Date.now() - lastPostgresSweep >= 250) {
      lastPostgresSweep = Date.now();
      for (const entry of await readdir('/proc')) {
        const pid = Number(entry);
        if (!Number.isInteger(pid)) {
          continue;
        }
        if (notPostgres.has(pid)) {
          continue;
        }
        if (!postgres.has(pid)) {
          const argv = (await argvOf(pid)).join(' ');
          if (!argv.startsWith('postgres:') || !argv.includes(` ${name} `)) {
            notPostgres.add(pid);
            continue;
          }
        }
        const fields = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).replace(/^.*\) /, '').split(' ');
        if (fields.length < 13) {
          continue;
        }
        const ticks = Number(fields[11]) + Number(fields[12]);
        postgresTicks += ticks - (postgres.get(pid) ?? 0);
        postgres.set(pid, ticks);
      }
    }
  }

  const loop = (async () => {
    while (running) {
      await sweep().catch(() => undefined);
      await new Promise((wake) => setTimeout(wake, intervalMs));
    }
  })();

  return {
    async read() {
      const out = {} as Record<CpuCategory, number>;
      for (const category of CPU_CATEGORIES) {
        out[category] = Number((await readFile(`${base}/${category}/cpuacct.usage`, 'utf8')).trim()) / 1e9;
      }
      out.postgres = postgresTicks / TICK;
      return out;
    },
    async stop() {
      running = false;
      await loop;
      await writeFile(`${ROOT}/cgroup.procs`, String(process.pid)).catch(() => undefined);
      for (const category of CPU_CATEGORIES) {
        const left = (await readFile(`${base}/${category}/cgroup.procs`, 'utf8').catch(() => '')).split('\n').filter(Boolean);
        for (const pid of left) {
          await writeFile(`${ROOT}/cgroup.procs`, pid).catch(() => undefined);
        }
        await rmdir(`${base}/${category}`).catch(() => undefined);
      }
      await rmdir(base).catch(() => undefined);
    },
  };
}

/** Per-category differences `after - before`, with a total. */
export function cpuDelta(before: Record<CpuCategory, number>, after: Record<CpuCategory, number>): Record<CpuCategory | 'total', number> {
  const out = { total: 0 } as Record<CpuCategory | 'total', number>;
  for (const category of CPU_CATEGORIES) {
    out[category] = after[category] - before[category];
    out.total += out[category];
  }
  return out;
}
