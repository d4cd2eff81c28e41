import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive } from './standins/process-state';

/**
 * Pids of processes living in any of the given namespaces, identified by the
 * nsfs files that pin them (`/run/netns/<name>`, a persisted mount
 * namespace, ...). Works after a crash, from nothing but those files.
 */
export function processesInNamespaces(namespaceFiles: readonly string[]): number[] {
  const wanted = new Set<string>();
  for (const file of namespaceFiles) {
    try {
      wanted.add(String(statSync(file).ino));
    } catch {
      // A namespace that is already gone holds no processes.
    }
  }
  if (wanted.size === 0) {
    return [];
  }
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) {
      continue;
    }
    for (const kind of ['net', 'mnt', 'uts']) {
      const link = safeReadlink(`/proc/${pid}/ns/${kind}`);
      const ino = link?.match(/\[(\d+)\]/)?.[1];
      if (ino !== undefined && wanted.has(ino)) {
        pids.push(pid);
        break;
      }
    }
  }
  return pids;
}

/** SIGTERM, a grace period, then SIGKILL for whatever is left. */
export async function terminateProcesses(pids: readonly number[], graceMs = 2000): Promise<void> {
  signalAll(pids, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && pids.some(processAlive)) {
    await sleep(25);
  }
  signalAll(pids.filter(processAlive), 'SIGKILL');
  const killDeadline = Date.now() + 2000;
  while (Date.now() < killDeadline && pids.some(processAlive)) {
    await sleep(25);
  }
}

/** The command line of a process (empty when it is gone). */
export function processCommandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

function safeReadlink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
