import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT_CODES, statePaths } from '@ccos/agent/feature-steps';
import { loadConfig } from './load-config';
import { isAgentFor, processAlive, readPid } from './pid-file';

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) {
      return true;
    }
    await sleep(50);
  }
  return !processAlive(pid);
}

/**
 * `boot-worker stop`: SIGTERM to the run's agent (it reports the current
 * step as stopped and flushes its spool), SIGKILL after the grace period.
 */
export async function stopAgent(configFile: string, graceSeconds: number): Promise<number> {
  const loaded = loadConfig(configFile);
  if (!loaded.ok) {
    process.stderr.write(`boot-worker: ${loaded.message}\n`);
    return EXIT_CODES.badConfig;
  }
  const pidPath = statePaths(loaded.config.stateDir).pid;
  const pid = readPid(pidPath);
  if (pid === null || !processAlive(pid) || !isAgentFor(pid, loaded.path)) {
    rmSync(pidPath, { force: true });
    process.stdout.write('not running\n');
    return 0;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch (error) {
    process.stderr.write(`boot-worker: cannot signal pid ${pid}: ${(error as Error).message}\n`);
    return 1;
  }
  if (await waitGone(pid, graceSeconds * 1000)) {
    process.stdout.write(`stopped pid ${pid}\n`);
    return 0;
  }
  process.kill(pid, 'SIGKILL');
  await waitGone(pid, 5_000);
  rmSync(pidPath, { force: true });
  process.stdout.write(`killed pid ${pid} (still running after ${graceSeconds} s)\n`);
  return 0;
}
