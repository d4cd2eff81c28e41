import { readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';

/** The pid in a pid file, or null. */
export function readPid(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}

export function writePid(path: string, pid: number): void {
  const temp = `${path}.${pid}.tmp`;
  writeFileSync(temp, `${pid}\n`, { mode: 0o644 });
  renameSync(temp, path);
}

/** Removes the pid file if it still names `pid` (a newer agent may own it). */
export function removePid(path: string, pid: number): void {
  if (readPid(path) === pid) {
    rmSync(path, { force: true });
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `pid` is a boot-worker running this config (`run --config <path>`),
 * so a pid reused by another program is never signalled.
 */
export function isAgentFor(pid: number, configPath: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const zombie = /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return !zombie && argv.includes('run') && argv.includes(configPath);
  } catch {
    return false;
  }
}
