import './stdout-pipe';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { HOST_PATH } from '../lab-layout';
import { BOOT_ID_PATH, onHost, readLabConfig, statePath, STANDIN_FILES } from './host-state';
import { processAlive } from './process-state';
import { appendJournal, formatEntry, readJournal } from './systemd/journal';
import { newJobId, superviseService } from './systemd/service-supervisor';
import {
  isMasked,
  listUnitNames,
  normaliseUnitName,
  readUnitSources,
  serviceDefinition,
  type UnitSources,
} from './systemd/unit-file';
import {
  forgetLoaded,
  readLoaded,
  readRuntime,
  sameSources,
  updateRuntime,
  writeLoaded,
  writeRuntime,
  type UnitRuntime,
} from './systemd/unit-runtime';

/**
 * `systemctl` stand-in over the host's unit files in /etc/systemd/system:
 * daemon-reload, enable/disable (with `--now`), start/stop/restart, is-active,
 * is-enabled, is-failed, status, show, cat, mask/unmask, list-units,
 * list-unit-files, reset-failed. Started services run detached inside the
 * host's namespaces under a supervisor (see service-supervisor.ts) with
 * their output in a per-unit journal (`journalctl -u`). `reboot` (or
 * `systemctl reboot`) reboots the lab host, never the machine: half a second
 * later every unit stops and every process of the host ends (sshd and its
 * sessions too), the boot id changes, and after `rebootSeconds` sshd and the
 * enabled units start again. poweroff/halt/shutdown record the request and
 * change nothing.
 */
const SYSTEM_DIR = '/etc/systemd/system';
const START_TIMEOUT_MS = 90_000;

interface Options {
  readonly quiet: boolean;
  readonly now: boolean;
  readonly value: boolean;
  readonly all: boolean;
  readonly properties: readonly string[];
}

async function main(invokedAs: string, argv: readonly string[]): Promise<number> {
  if (argv[0] === '--lab-supervise') {
    await superviseService(argv[1] ?? '', argv[2] ?? '');
    return 0;
  }
  if (argv[0] === '--lab-reboot') {
    await rebootHost();
    return 0;
  }
  if (invokedAs === 'reboot') {
    return requestReboot();
  }
  if (['poweroff', 'halt', 'shutdown'].includes(invokedAs)) {
    return refusePowerAction(invokedAs);
  }
  const { words, options } = parseArgs(argv);
  const [verb, ...names] = words;
  if (verb === undefined) {
    return listUnits(options);
  }
  const units = names.map(normaliseUnitName);
  switch (verb) {
    case 'daemon-reload':
    case 'daemon-reexec':
      return daemonReload();
    case 'start':
      return eachUnit(units, start);
    case 'stop':
      return eachUnit(units, stop);
    case 'restart':
    case 'reload-or-restart':
    case 'force-reload':
      return eachUnit(units, (unit) => restart(unit));
    case 'try-restart':
      return eachUnit(units, (unit) => (isRunning(readRuntime(unit)) ? restart(unit) : 0));
    case 'reload':
      return eachUnit(units, (unit) => reload(unit));
    case 'enable':
      return eachUnit(units, (unit) => enable(unit, options));
    case 'disable':
      return eachUnit(units, (unit) => disable(unit, options));
    case 'is-active':
      return isActive(units, options);
    case 'is-failed':
      return isFailed(units, options);
    case 'is-enabled':
      return isEnabled(units, options);
    case 'status':
      return status(units);
    case 'show':
      return show(units, options);
    case 'cat':
      return cat(units);
    case 'mask':
      return eachUnit(units, mask);
    case 'unmask':
      return eachUnit(units, unmask);
    case 'reset-failed':
      for (const unit of units.length > 0 ? units : listUnitNames()) {
        if (readRuntime(unit).activeState === 'failed') {
          updateRuntime(unit, { activeState: 'inactive', subState: 'dead', result: 'success' });
        }
      }
      return 0;
    case 'list-units':
      return listUnits(options);
    case 'list-unit-files':
      return listUnitFiles();
    case 'reboot':
      return requestReboot();
    case 'poweroff':
    case 'halt':
    case 'kexec':
    case 'suspend':
      return refusePowerAction(verb);
    case 'is-system-running':
      process.stdout.write('running\n');
      return 0;
    default:
      process.stderr.write(`Unknown command verb ${verb}.\n`);
      return 1;
  }
}

function parseArgs(argv: readonly string[]): { words: string[]; options: Options } {
  const words: string[] = [];
  const properties: string[] = [];
  let quiet = false;
  let now = false;
  let value = false;
  let all = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (arg === '-q' || arg === '--quiet') {
      quiet = true;
    } else if (arg === '--now') {
      now = true;
    } else if (arg === '--value') {
      value = true;
    } else if (arg === '-a' || arg === '--all') {
      all = true;
    } else if (arg === '-p' || arg === '--property') {
      properties.push(...(argv[i + 1] ?? '').split(','));
      i += 1;
    } else if (arg.startsWith('--property=')) {
      properties.push(...arg.slice('--property='.length).split(','));
    } else if (arg.startsWith('-p') && arg.length > 2 && !arg.startsWith('--')) {
      properties.push(...arg.slice(2).split(','));
    } else if (arg === '--version') {
      words.push('--version');
    } else if (!arg.startsWith('-')) {
      words.push(arg);
    }
    // Other flags (--no-pager, --no-block, --system, -l, --full, --plain, --no-legend, --type=...) change nothing here.
  }
  if (words[0] === '--version') {
    process.stdout.write('systemd 252 (252.17-1.el9) (lab stand-in)\n');
    process.exit(0);
  }
  return { words, options: { quiet, now, value, all, properties } };
}

async function eachUnit(units: readonly string[], action: (unit: string) => number | Promise<number>): Promise<number> {
  if (units.length === 0) {
    process.stderr.write(`Too few arguments.\n`);
    return 1;
  }
  let code = 0;
  for (const unit of units) {
    const result = await action(unit);
    if (result !== 0 && code === 0) {
      code = result;
    }
  }
  return code;
}

/** The unit definition systemd would use: the loaded one, or load it now. */
function loadUnit(unit: string): UnitSources | null {
  const onDisk = readUnitSources(unit);
  const loaded = readLoaded(unit);
  if (loaded !== null) {
    if (onDisk === null || !sameSources(loaded, onDisk)) {
      process.stderr.write(
        `Warning: The unit file, source configuration file or drop-ins of ${unit} changed on disk. Run 'systemctl daemon-reload' to reload units.\n`,
      );
    }
    return loaded;
  }
  if (onDisk !== null) {
    writeLoaded(onDisk);
  }
  return onDisk;
}

function daemonReload(): number {
  const present = new Set(listUnitNames());
  for (const unit of present) {
    const sources = readUnitSources(unit);
    if (sources !== null) {
      writeLoaded(sources);
    }
  }
  for (const unit of loadedUnitNames()) {
    if (!present.has(unit)) {
      forgetLoaded(unit);
    }
  }
  return 0;
}

function loadedUnitNames(): string[] {
  try {
    return readdirSync(onHost('/var/lib/ccos-lab/systemd/loaded')).map((file) => file.replace(/\.json$/, ''));
  } catch {
    return [];
  }
}

function isRunning(runtime: UnitRuntime): boolean {
  return runtime.activeState === 'active' || runtime.activeState === 'activating' || runtime.activeState === 'deactivating';
}

async function start(unit: string): Promise<number> {
  if (isMasked(unit)) {
    process.stderr.write(`Failed to start ${unit}: Unit ${unit} is masked.\n`);
    return 1;
  }
  const sources = loadUnit(unit);
  if (sources === null) {
    process.stderr.write(`Failed to start ${unit}: Unit ${unit} not found.\n`);
    return 5;
  }
  if (isRunning(readRuntime(unit))) {
    return 0;
  }
  const job = newJobId();
  const previous = readRuntime(unit);
  writeRuntime(unit, { ...previous, activeState: 'activating', subState: 'start', job, since: new Date().toISOString() });
  const script = process.argv[1] ?? '/usr/local/sbin/systemctl';
  const supervisor = spawn(process.execPath, [script, '--lab-supervise', unit, job], {
    detached: true,
    stdio: 'ignore',
    cwd: '/',
  });
  supervisor.unref();
  updateRuntime(unit, { supervisorPid: supervisor.pid });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const runtime = readRuntime(unit);
    if (runtime.startedJob === job) {
      return 0;
    }
    if (runtime.job === job && runtime.activeState !== 'activating') {
      if (runtime.activeState === 'failed') {
        process.stderr.write(
          `Job for ${unit} failed because the control process exited with error code.\n` +
          `See "systemctl status ${unit}" and "journalctl -xeu ${unit}" for details.\n`,
        );
        return 1;
      }
      return 0;
    }
    if (supervisor.pid === undefined || !processAlive(supervisor.pid)) {
      if (readRuntime(unit).job !== job) {
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stderr.write(`Job for ${unit} failed because a timeout was exceeded.\n`);
  return 1;
}

async function stop(unit: string): Promise<number> {
  if (readUnitSources(unit) === null && readLoaded(unit) === null) {
    process.stderr.write(`Failed to stop ${unit}: Unit ${unit} not loaded.\n`);
    return 5;
  }
  const runtime = readRuntime(unit);
  const pid = runtime.supervisorPid;
  if (pid !== undefined && processAlive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (processAlive(pid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (processAlive(pid)) {
      process.kill(-pid, 'SIGKILL');
    }
  }
  // A supervisor that died unseen (or a unit stopped while restarting) ends up stopped all the same.
  const after = readRuntime(unit);
  if (isRunning(after) || (after.activeState === 'failed' && pid !== undefined)) {
    updateRuntime(unit, { activeState: 'inactive', subState: 'dead', supervisorPid: undefined, mainPid: undefined });
  }
  return 0;
}

async function restart(unit: string): Promise<number> {
  const stopped = await stop(unit);
  if (stopped === 5 && readUnitSources(unit) === null) {
    process.stderr.write(`Failed to restart ${unit}: Unit ${unit} not found.\n`);
    return 5;
  }
  return start(unit);
}

function reload(unit: string): number {
  const runtime = readRuntime(unit);
  if (!isRunning(runtime)) {
    process.stderr.write(`Failed to reload ${unit}: Job type reload is not applicable for unit ${unit}.\n`);
    return 1;
  }
  if (runtime.mainPid !== undefined) {
    try {
      process.kill(runtime.mainPid, 'SIGHUP');
    } catch {
      // Gone meanwhile.
    }
  }
  return 0;
}

function installLinks(unit: string): string[] {
  const sources = readUnitSources(unit);
  if (sources === null) {
    return [];
  }
  const definition = serviceDefinition(sources);
  return [
    ...definition.wantedBy.map((target) => join(SYSTEM_DIR, `${target}.wants`, unit)),
    ...definition.requiredBy.map((target) => join(SYSTEM_DIR, `${target}.requires`, unit)),
  ];
}

async function enable(unit: string, options: Options): Promise<number> {
  const sources = readUnitSources(unit);
  if (sources === null) {
    process.stderr.write(`Failed to enable unit: Unit file ${unit} does not exist.\n`);
    return 1;
  }
  const links = installLinks(unit);
  if (links.length === 0) {
    process.stderr.write(
      `The unit files have no installation config (WantedBy=, RequiredBy=, Also=,\nAlias= settings in the [Install] section, and DefaultInstance= for template\nunits). This means they are not meant to be enabled or disabled using systemctl.\n`,
    );
  }
  for (const link of links) {
    if (!existsSync(onHost(link))) {
      mkdirSync(onHost(join(link, '..')), { recursive: true });
      symlinkSync(sources.fragment.path, onHost(link));
      if (!options.quiet) {
        process.stderr.write(`Created symlink ${link} → ${sources.fragment.path}.\n`);
      }
    }
  }
  return options.now ? start(unit) : 0;
}

async function disable(unit: string, options: Options): Promise<number> {
  for (const link of wantsLinksOf(unit)) {
    rmSync(onHost(link), { force: true });
    if (!options.quiet) {
      process.stderr.write(`Removed "${link}".\n`);
    }
  }
  return options.now ? stop(unit) : 0;
}

/** Every `<target>.wants|requires/<unit>` symlink on the host. */
function wantsLinksOf(unit: string): string[] {
  const out: string[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync(onHost(SYSTEM_DIR));
  } catch {
    return out;
  }
  for (const entry of entries.filter((name) => name.endsWith('.wants') || name.endsWith('.requires'))) {
    const link = join(SYSTEM_DIR, entry, unit);
    try {
      readlinkSync(onHost(link));
      out.push(link);
    } catch {
      // Not linked there.
    }
  }
  return out;
}

function enabledState(unit: string): 'enabled' | 'disabled' | 'static' | 'masked' | null {
  if (isMasked(unit)) {
    return 'masked';
  }
  const sources = readUnitSources(unit);
  if (sources === null) {
    return null;
  }
  if (wantsLinksOf(unit).length > 0) {
    return 'enabled';
  }
  return serviceDefinition(sources).hasInstallSection ? 'disabled' : 'static';
}

function isEnabled(units: readonly string[], options: Options): number {
  let code = 1;
  for (const unit of units) {
    const state = enabledState(unit);
    if (state === null) {
      process.stderr.write(`Failed to get unit file state for ${unit}: No such file or directory\n`);
      continue;
    }
    if (!options.quiet) {
      process.stdout.write(`${state}\n`);
    }
    if (state === 'enabled' || state === 'static') {
      code = 0;
    }
  }
  return code;
}

function visibleState(unit: string): string {
  const runtime = readRuntime(unit);
  return runtime.activeState;
}

function isActive(units: readonly string[], options: Options): number {
  let code = 3;
  for (const unit of units) {
    const state = visibleState(unit);
    if (!options.quiet) {
      process.stdout.write(`${state}\n`);
    }
    if (state === 'active') {
      code = 0;
    }
  }
  return code;
}

function isFailed(units: readonly string[], options: Options): number {
  let code = 1;
  for (const unit of units) {
    const state = visibleState(unit);
    if (!options.quiet) {
      process.stdout.write(`${state}\n`);
    }
    if (state === 'failed') {
      code = 0;
    }
  }
  return code;
}

function status(units: readonly string[]): number {
  let code = 0;
  for (const unit of units) {
    const sources = readUnitSources(unit) ?? readLoaded(unit);
    if (sources === null) {
      process.stderr.write(`Unit ${unit} could not be found.\n`);
      code = 4;
      continue;
    }
    const definition = serviceDefinition(sources);
    const runtime = readRuntime(unit);
    const enabled = enabledState(unit) ?? 'disabled';
    const since = runtime.since ? new Date(runtime.since) : null;
    const ago = since ? `; ${Math.max(0, Math.round((Date.now() - since.getTime()) / 1000))}s ago` : '';
    const sub = runtime.subState;
    const dot = runtime.activeState === 'active' ? '●' : runtime.activeState === 'failed' ? '×' : '○';
    const lines = [
      `${dot} ${unit} - ${definition.description}`,
      `     Loaded: loaded (${sources.fragment.path}; ${enabled}; preset: disabled)`,
      ...(sources.dropins.length > 0 ? [`    Drop-In: ${sources.dropins.map((d) => d.path).join(', ')}`] : []),
      `     Active: ${runtime.activeState} (${sub})${since ? ` since ${since.toUTCString()}${ago}` : ''}`,
      ...(runtime.mainPid !== undefined && runtime.activeState === 'active'
        ? [`   Main PID: ${runtime.mainPid} (${basename(definition.execStart[0]?.split(/\s+/)[0] ?? unit)})`]
        : []),
      '',
      ...readJournal(unit).slice(-10).map((entry) => formatEntry(entry, hostname())),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (runtime.activeState !== 'active' && code === 0) {
      code = 3;
    }
  }
  return code;
}

function show(units: readonly string[], options: Options): number {
  for (const unit of units) {
    const sources = readUnitSources(unit) ?? readLoaded(unit);
    const runtime = readRuntime(unit);
    const definition = sources === null ? null : serviceDefinition(sources);
    const properties: Record<string, string> = {
      Id: unit,
      Names: unit,
      Description: definition?.description ?? unit,
      LoadState: isMasked(unit) ? 'masked' : sources === null ? 'not-found' : 'loaded',
      ActiveState: runtime.activeState,
      SubState: runtime.subState,
      Result: runtime.result,
      MainPID: String(runtime.activeState === 'active' ? runtime.mainPid ?? 0 : 0),
      ExecMainStatus: String(runtime.execMainStatus ?? 0),
      NRestarts: String(runtime.nRestarts),
      UnitFileState: enabledState(unit) ?? '',
      FragmentPath: sources?.fragment.path ?? '',
      Type: definition?.type ?? '',
      Restart: definition?.restart ?? '',
      ActiveEnterTimestamp: runtime.since ? new Date(runtime.since).toUTCString() : '',
    };
    for (const [key, value] of Object.entries(properties)) {
      if (options.properties.length === 0 || options.properties.includes(key)) {
        process.stdout.write(options.value ? `${value}\n` : `${key}=${value}\n`);
      }
    }
  }
  return 0;
}

function cat(units: readonly string[]): number {
  let code = 0;
  for (const unit of units) {
    const sources = readUnitSources(unit);
    if (sources === null) {
      process.stderr.write(`No files found for ${unit}.\n`);
      code = 1;
      continue;
    }
    for (const source of [sources.fragment, ...sources.dropins]) {
      process.stdout.write(`# ${source.path}\n${source.text.replace(/\n?$/, '\n')}`);
    }
  }
  return code;
}

function mask(unit: string): number {
  const link = join(SYSTEM_DIR, unit);
  if (existsSync(onHost(link)) && !isMasked(unit)) {
    process.stderr.write(`Failed to mask unit: File ${link} already exists.\n`);
    return 1;
  }
  rmSync(onHost(link), { force: true });
  symlinkSync('/dev/null', onHost(link));
  process.stderr.write(`Created symlink ${link} → /dev/null.\n`);
  return 0;
}

function unmask(unit: string): number {
  if (isMasked(unit)) {
    rmSync(onHost(join(SYSTEM_DIR, unit)), { force: true });
    process.stderr.write(`Removed "${join(SYSTEM_DIR, unit)}".\n`);
  }
  return 0;
}

function listUnits(options: Options): number {
  process.stdout.write('  UNIT                LOAD   ACTIVE   SUB     DESCRIPTION\n');
  for (const unit of listUnitNames()) {
    const runtime = readRuntime(unit);
    if (!options.all && runtime.activeState === 'inactive') {
      continue;
    }
    const sources = readUnitSources(unit);
    const description = sources === null ? unit : serviceDefinition(sources).description;
    process.stdout.write(`  ${unit.padEnd(19)} loaded ${runtime.activeState.padEnd(8)} ${runtime.subState.padEnd(7)} ${description}\n`);
  }
  return 0;
}

function listUnitFiles(): number {
  process.stdout.write('UNIT FILE            STATE    PRESET\n');
  for (const unit of listUnitNames()) {
    process.stdout.write(`${unit.padEnd(20)} ${(enabledState(unit) ?? 'bad').padEnd(8)} disabled\n`);
  }
  return 0;
}

const REBOOT_DELAY_MS = 500;
const DEFAULT_REBOOT_SECONDS = 2;

/** Like systemd: the command returns, and the host goes down a moment later (the caller's session with it). */
function requestReboot(): number {
  appendJournal('systemd-logind.service', 'systemd-logind', 1, `lab host: reboot requested by pid ${process.ppid}`);
  const script = process.argv[1] ?? '/usr/local/sbin/systemctl';
  spawn(process.execPath, [script, '--lab-reboot'], { detached: true, stdio: 'ignore', cwd: '/' }).unref();
  return 0;
}

/** The lab host's reboot: every unit and process of the host stops, a new boot id, then sshd and the enabled units start. */
async function rebootHost(): Promise<void> {
  const bootId = statePath(STANDIN_FILES.bootId);
  if (!existsSync(bootId) || readFileSync(BOOT_ID_PATH, 'utf8') !== readFileSync(bootId, 'utf8')) {
    // Not a lab host (a spec's temp root: the kernel's boot id is not the host's): the machine is never rebooted, nor its processes ended.
    appendJournal('systemd-logind.service', 'systemd-logind', 1, 'lab host: reboot outside a lab host; not carried out');
    return;
  }
  await sleep(REBOOT_DELAY_MS);
  for (const unit of loadedUnitNames()) {
    if (isRunning(readRuntime(unit))) {
      await stop(unit);
    }
  }
  killHostProcesses(readlinkSync('/proc/self/ns/net'));
  writeFileSync(bootId, `${randomUUID()}\n`);
  // A boot loads the unit files as they are on disk.
  for (const unit of loadedUnitNames()) {
    forgetLoaded(unit);
  }
  await sleep((readLabConfig().rebootSeconds ?? DEFAULT_REBOOT_SECONDS) * 1000);
  spawn('/usr/sbin/sshd', [], { env: { PATH: HOST_PATH, LANG: 'C.UTF-8' }, detached: true, stdio: 'ignore', cwd: '/' }).unref();
  for (const unit of listUnitNames()) {
    if (enabledState(unit) === 'enabled') {
      await start(unit);
    }
  }
  appendJournal('systemd-logind.service', 'systemd-logind', 1, 'lab host: booted');
}

/** Ends every process in this host's network namespace but this one: sshd, its sessions, what they started. */
function killHostProcesses(own: string): void {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) {
      continue;
    }
    try {
      if (readlinkSync(`/proc/${pid}/ns/net`) === own) {
        process.kill(pid, 'SIGKILL');
      }
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function refusePowerAction(action: string): number {
  appendJournal('systemd-logind.service', 'systemd-logind', 1, `lab host: ${action} requested by pid ${process.ppid}; not carried out`);
  process.stderr.write(`lab host: ${action} is not carried out (recorded in the journal of systemd-logind.service)\n`);
  return 0;
}

main(basename(process.argv[1] ?? 'systemctl'), process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`systemctl: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
