import { readFileSync } from 'node:fs';
import { processCommandLine } from './processes';
import { processAlive } from './standins/process-state';

/**
 * A process told apart from a later one that got the same pid: its pid and
 * its start time (clock ticks since boot, /proc/PID/stat field 22).
 */
export interface ProcessIdentity {
  readonly pid: number;
  /** Null when it could not be read (then only the pid is compared). */
  readonly processStart: string | null;
  /** Its command line, for people reading who holds what. */
  readonly command: string;
}

/** The start time of a process, or null when it is gone. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may contain spaces and parentheses; fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** The identity of a running process (this one by default). */
export function processIdentity(pid = process.pid): ProcessIdentity {
  const command = pid === process.pid
    ? process.argv.slice(1).join(' ')
    : processCommandLine(pid).join(' ');
  return { pid, processStart: processStart(pid), command: command.slice(0, 200) };
}

/** Whether the process is still the one recorded (not gone, not a zombie, pid not reused). */
export function identityAlive(identity: Pick<ProcessIdentity, 'pid' | 'processStart'>): boolean {
  if (!processAlive(identity.pid)) {
    return false;
  }
  return identity.processStart === null || processStart(identity.pid) === identity.processStart;
}

/** Whether `ancestor` is this process or one of its parents. */
export function isAncestorOfSelf(ancestor: number): boolean {
  for (let pid = process.pid; pid > 1; pid = parentPid(pid)) {
    if (pid === ancestor) {
      return true;
    }
  }
  return false;
}

function parentPid(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? 0);
  } catch {
    return 0;
  }
}
