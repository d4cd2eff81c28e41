import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onHost } from '../host-state';
import { appendJournal } from './journal';
import {
  parseEnvironmentFile,
  parseExecLine,
  serviceDefinition,
  type ExecCommand,
  type ServiceDefinition,
} from './unit-file';
import { readLoaded, updateRuntime } from './unit-runtime';

/**
 * What systemd (pid 1) does for one started service, done by a detached
 * process per unit: run ExecStartPre=, start ExecStart= with its output going
 * to the unit's journal, restart it per Restart=/RestartSec=, and on SIGTERM
 * (`systemctl stop`) stop it within TimeoutStopSec=. It records every state
 * change for `systemctl is-active`/`status` and logs systemd's own messages.
 */
const SERVICE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Cap on how long a stop waits before SIGKILL, whatever the unit says. */
const MAX_STOP_SECONDS = 10;

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Runs the supervisor for `unit` until the service ends for good or is stopped. */
export async function superviseService(unit: string, job: string): Promise<void> {
  const sources = readLoaded(unit);
  if (sources === null) {
    updateRuntime(unit, { activeState: 'failed', subState: 'failed', result: 'resources', job });
    return;
  }
  const definition = serviceDefinition(sources);
  const log = (message: string) => appendJournal(unit, 'systemd', 1, message);
  let main: ChildProcess | undefined;
  let stopping = false;

  process.on('SIGTERM', () => {
    if (stopping) {
      return;
    }
    stopping = true;
    void stop(unit, definition, main, log, job);
  });
  process.on('SIGHUP', () => undefined);

  let restarts = 0;
  for (;;) {
    log(`Starting ${definition.description}...`);
    const env = serviceEnvironment(definition);
    if (env === null) {
      log(`${unit}: Failed to load environment files: No such file or directory`);
      fail(unit, definition, log, 'resources', job, restarts);
      return;
    }
    const pre = await runControlCommands(unit, definition.execStartPre, env, definition.workingDirectory);
    if (!pre) {
      fail(unit, definition, log, 'exit-code', job, restarts);
      if (!shouldRestart(definition.restart, { code: 1, signal: null }) || stopping) {
        return;
      }
    } else if (definition.type === 'oneshot') {
      const ok = await runControlCommands(unit, definition.execStart, env, definition.workingDirectory, 'main');
      if (!ok) {
        fail(unit, definition, log, 'exit-code', job, restarts);
        return;
      }
      log(`${unit}: Deactivated successfully.`);
      log(`Finished ${definition.description}.`);
      updateRuntime(unit, {
        ...(definition.remainAfterExit ? { activeState: 'active', subState: 'exited' } : { activeState: 'inactive', subState: 'dead' }),
        result: 'success', job, startedJob: job, supervisorPid: undefined, mainPid: undefined, nRestarts: restarts,
      });
      return;
    } else {
      const line = definition.execStart[definition.execStart.length - 1];
      if (line === undefined) {
        log(`${unit}: Service has no ExecStart= setting, which is only allowed for Type=oneshot services. Refusing.`);
        fail(unit, definition, log, 'resources', job, restarts);
        return;
      }
      const command = parseExecLine(line, env, unit);
      const started = startProcess(unit, command, env, definition.workingDirectory);
      main = started.child;
      updateRuntime(unit, {
        activeState: 'active', subState: 'running', result: 'success', job, startedJob: job,
        supervisorPid: process.pid, mainPid: main.pid, nRestarts: restarts,
      });
      log(`Started ${definition.description}.`);
      for (const post of definition.execStartPost) {
        await runControlCommands(unit, [post], env, definition.workingDirectory);
      }
      const outcome = await started.exited;
      main = undefined;
      if (stopping) {
        return;
      }
      log(`${unit}: Main process exited, ${describeOutcome(outcome)}`);
      const succeeded = outcome.code === 0;
      if (!shouldRestart(definition.restart, outcome)) {
        if (succeeded) {
          log(`${unit}: Deactivated successfully.`);
          updateRuntime(unit, { activeState: 'inactive', subState: 'dead', result: 'success', mainPid: undefined, execMainStatus: 0 });
        } else {
          fail(unit, definition, log, outcome.signal ? 'signal' : 'exit-code', job, restarts, outcome.code ?? undefined);
        }
        return;
      }
      if (!succeeded) {
        log(`${unit}: Failed with result '${outcome.signal ? 'signal' : 'exit-code'}'.`);
      }
    }
    updateRuntime(unit, { activeState: 'activating', subState: 'auto-restart', mainPid: undefined });
    await sleep(Math.max(definition.restartSec, 0.1) * 1000);
    if (stopping) {
      return;
    }
    restarts += 1;
    log(`${unit}: Scheduled restart job, restart counter is at ${restarts}.`);
    log(`Stopped ${definition.description}.`);
  }
}

/** A random id for a start job. */
export function newJobId(): string {
  return randomBytes(8).toString('hex');
}

function fail(
  unit: string,
  definition: ServiceDefinition,
  log: (message: string) => void,
  result: string,
  job: string,
  restarts: number,
  status?: number,
): void {
  log(`${unit}: Failed with result '${result}'.`);
  log(`Failed to start ${definition.description}.`);
  updateRuntime(unit, {
    activeState: 'failed', subState: 'failed', result, job, mainPid: undefined, nRestarts: restarts,
    ...(status === undefined ? {} : { execMainStatus: status }),
  });
}

async function stop(
  unit: string,
  definition: ServiceDefinition,
  main: ChildProcess | undefined,
  log: (message: string) => void,
  job: string,
): Promise<void> {
  updateRuntime(unit, { activeState: 'deactivating', subState: 'stop-sigterm' });
  log(`Stopping ${definition.description}...`);
  if (main?.pid !== undefined && main.exitCode === null && main.signalCode === null) {
    const exited = new Promise<void>((resolve) => main.once('exit', () => resolve()));
    main.kill('SIGTERM');
    const timeout = Math.min(definition.timeoutStopSec, MAX_STOP_SECONDS) * 1000;
    const stopped = await Promise.race([exited.then(() => true), sleep(timeout).then(() => false)]);
    if (!stopped) {
      log(`${unit}: State 'stop-sigterm' timed out. Killing.`);
      main.kill('SIGKILL');
      await exited;
    }
  }
  log(`${unit}: Deactivated successfully.`);
  log(`Stopped ${definition.description}.`);
  updateRuntime(unit, { activeState: 'inactive', subState: 'dead', result: 'success', job, supervisorPid: undefined, mainPid: undefined });
  process.exit(0);
}

function shouldRestart(policy: ServiceDefinition['restart'], outcome: Outcome): boolean {
  const clean = outcome.code === 0;
  switch (policy) {
    case 'always':
      return true;
    case 'on-failure':
      return !clean;
    case 'on-abnormal':
    case 'on-abort':
      return outcome.signal !== null;
    case 'on-success':
      return clean;
    default:
      return false;
  }
}

function describeOutcome({ code, signal }: Outcome): string {
  if (signal !== null) {
    return `code=killed, status=${signalNumber(signal)}/${signal.replace(/^SIG/, '')}`;
  }
  const names: Record<number, string> = { 0: 'SUCCESS', 203: 'EXEC', 200: 'CHDIR' };
  return `code=exited, status=${code}/${names[code ?? 1] ?? 'FAILURE'}`;
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGTERM: 15, SIGABRT: 6 };
  return numbers[signal] ?? 0;
}

/** The environment systemd gives the service: a clean base plus Environment= and EnvironmentFile=. */
function serviceEnvironment(definition: ServiceDefinition): Record<string, string> | null {
  const env: Record<string, string> = {
    PATH: SERVICE_PATH,
    LANG: 'C.UTF-8',
    INVOCATION_ID: randomBytes(16).toString('hex'),
    ...definition.environment,
  };
  for (const file of definition.environmentFiles) {
    try {
      Object.assign(env, parseEnvironmentFile(readFileSync(onHost(file.path), 'utf8')));
    } catch {
      if (!file.optional) {
        return null;
      }
    }
  }
  return env;
}

/** Runs ExecStartPre=-like commands one after another; false when one failed (and was not `-`). */
async function runControlCommands(
  unit: string,
  lines: readonly string[],
  env: Record<string, string>,
  cwd: string,
  kind: 'control' | 'main' = 'control',
): Promise<boolean> {
  for (const line of lines) {
    const command = parseExecLine(line, env, unit);
    const outcome = await startProcess(unit, command, env, cwd).exited;
    if (outcome.code !== 0 && !command.ignoreFailure) {
      const what = kind === 'main' ? 'Main process' : 'Control process';
      appendJournal(unit, 'systemd', 1, `${unit}: ${what} exited, ${describeOutcome(outcome)}`);
      return false;
    }
  }
  return true;
}

/** Starts one command with its stdout/stderr going to the unit's journal, line by line. */
function startProcess(
  unit: string,
  command: ExecCommand,
  env: Record<string, string>,
  cwd: string,
): { child: ChildProcess; exited: Promise<Outcome> } {
  const [file, ...args] = command.argv;
  const identifier = basename(file ?? unit);
  const child = spawn(file ?? '/bin/false', args, { env, cwd: onHost(cwd), stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid ?? 0;
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream?.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      if (lines.length > 0) {
        appendJournal(unit, identifier, pid, lines.join('\n'));
      }
    });
    stream?.on('end', () => {
      if (pending !== '') {
        appendJournal(unit, identifier, pid, pending);
        pending = '';
      }
    });
  }
  const exited = new Promise<Outcome>((resolve) => {
    child.on('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ENOENT' ? 'No such file or directory' : error.code === 'EACCES' ? 'Permission denied' : error.message;
      appendJournal(unit, 'systemd', 1, `${unit}: Failed to execute ${file ?? '(nothing)'}: ${reason}`);
      appendJournal(unit, 'systemd', 1, `${unit}: Failed at step EXEC spawning ${file ?? '(nothing)'}: ${reason}`);
      resolve({ code: 203, signal: null });
    });
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return { child, exited };
}
