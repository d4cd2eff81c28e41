import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { isSea } from 'node:sea';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT_CODES, statePaths } from '@ccos/agent/feature-steps';
import { loadConfig } from './load-config';
import { isAgentFor, processAlive, readPid } from './pid-file';
import { DETACHED_ENV } from './run-agent';

/** argv that runs this program again: the executable itself, or node + the bundle in development. */
export function selfCommand(args: readonly string[]): { command: string; args: string[] } {
  let sea = false;
  try {
    sea = isSea();
  } catch {
    sea = false;
  }
  return sea || process.argv[1] === undefined
    ? { command: process.execPath, args: [...args] }
    : { command: process.execPath, args: [process.argv[1], ...args] };
}

function logTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

/**
 * `boot-worker start`: checks the config, then starts `run` in a new
 * session (setsid, so the SSH session ending does not take it along) with
 * its output in agent.log, waits until it has written agent.pid, prints
 * `started pid <n>` and exits 0.
 */
export async function startAgent(configFile: string): Promise<number> {
  const loaded = loadConfig(configFile);
  if (!loaded.ok) {
    process.stderr.write(`boot-worker: ${loaded.message}\n`);
    return EXIT_CODES.badConfig;
  }
  const paths = statePaths(loaded.config.stateDir);
  mkdirSync(loaded.config.stateDir, { recursive: true, mode: 0o700 });
  const running = readPid(paths.pid);
  if (running !== null && processAlive(running) && isAgentFor(running, loaded.path)) {
    process.stdout.write(`already running pid ${running}\n`);
    return 0;
  }
  const out = openSync(paths.log, 'a', 0o600);
  const self = selfCommand(['run', '--config', loaded.path]);
  const child = spawn(self.command, self.args, {
    detached: true,
    stdio: ['ignore', out, out],
    cwd: '/',
    env: { ...process.env, [DETACHED_ENV]: '1' },
  });
  closeSync(out);
  let exited: number | null = null;
  child.on('exit', (code, signal) => {
    exited = code ?? (signal === null ? 1 : 128);
  });
  const pid = child.pid;
  if (pid === undefined) {
    process.stderr.write('boot-worker: could not start the agent process\n');
    return 1;
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (readPid(paths.pid) === pid) {
      child.unref();
      process.stdout.write(`started pid ${pid}\n`);
      return 0;
    }
    if (exited !== null) {
      process.stderr.write(`boot-worker: the agent exited at once (exit code ${exited}); the end of ${paths.log}:\n${logTail(paths.log)}\n`);
      return exited === EXIT_CODES.alreadyRunning ? 0 : exited || 1;
    }
    await sleep(20);
  }
  child.unref();
  process.stderr.write(`boot-worker: the agent (pid ${pid}) did not write ${paths.pid} within 15 s; see ${paths.log}\n`);
  return 1;
}
