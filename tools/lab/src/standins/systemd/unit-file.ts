import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { onHost } from '../host-state';

/**
 * systemd unit files as the systemctl stand-in reads them: a fragment in
 * /etc/systemd/system (or /run/systemd/system) plus drop-ins from
 * `<unit>.d/*.conf`, with systemd's rules for line continuation, list
 * settings and empty assignments that reset a list.
 *
 * @see https://www.freedesktop.org/software/systemd/man/latest/systemd.unit.html
 * @see https://www.freedesktop.org/software/systemd/man/latest/systemd.service.html
 */

/** Where unit files are looked up, in order (both private to each lab host). */
export const UNIT_DIRS = ['/etc/systemd/system', '/run/systemd/system'] as const;

/** The text of one unit file. */
export interface UnitSource {
  readonly path: string;
  readonly text: string;
}

/** A unit's fragment and drop-ins, as read from disk. */
export interface UnitSources {
  readonly name: string;
  readonly fragment: UnitSource;
  readonly dropins: readonly UnitSource[];
}

/** Settings by section and key; list settings keep every value in order. */
export type UnitSettings = ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;

/** A command line of ExecStart= and friends, after `$VAR` expansion. */
export interface ExecCommand {
  readonly argv: readonly string[];
  /** The `-` prefix: a failure of this command is ignored. */
  readonly ignoreFailure: boolean;
  /** The line as written in the unit (for `systemctl status`). */
  readonly text: string;
}

/** What the stand-in needs to run a service unit. */
export interface ServiceDefinition {
  readonly name: string;
  readonly description: string;
  readonly type: 'simple' | 'exec' | 'notify' | 'forking' | 'oneshot' | 'idle';
  readonly execStartPre: readonly string[];
  readonly execStart: readonly string[];
  readonly execStartPost: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly environmentFiles: readonly { readonly path: string; readonly optional: boolean }[];
  readonly workingDirectory: string;
  readonly restart: 'no' | 'always' | 'on-failure' | 'on-abnormal' | 'on-success' | 'on-abort' | 'on-watchdog';
  readonly restartSec: number;
  readonly remainAfterExit: boolean;
  readonly timeoutStopSec: number;
  readonly wantedBy: readonly string[];
  readonly requiredBy: readonly string[];
  readonly hasInstallSection: boolean;
}

/** `kubelet` → `kubelet.service`; names with a unit suffix stay as they are. */
export function normaliseUnitName(name: string): string {
  return /\.(service|socket|target|timer|path|mount|slice|scope|device|swap|automount)$/.test(name) ? name : `${name}.service`;
}

/** Reads a unit and its drop-ins from the host, or null when no fragment exists. */
export function readUnitSources(name: string): UnitSources | null {
  for (const dir of UNIT_DIRS) {
    const path = join(dir, name);
    const text = readText(path);
    if (text === null) {
      continue;
    }
    return { name, fragment: { path, text }, dropins: readDropins(name) };
  }
  return null;
}

/** Whether the unit is masked (a symlink to /dev/null in /etc/systemd/system). */
export function isMasked(name: string): boolean {
  try {
    return readlinkSync(onHost(join('/etc/systemd/system', name))) === '/dev/null';
  } catch {
    return false;
  }
}

/** Every unit file name on the host (fragments only). */
export function listUnitNames(): string[] {
  const names = new Set<string>();
  for (const dir of UNIT_DIRS) {
    try {
      for (const entry of readdirSync(onHost(dir), { withFileTypes: true })) {
        if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.includes('.')) {
          names.add(entry.name);
        }
      }
    } catch {
      // Folder absent on this host.
    }
  }
  return [...names].sort();
}

/** Parses a fragment plus drop-ins (applied in file name order) into settings. */
export function parseUnit(sources: readonly UnitSource[]): UnitSettings {
  const sections = new Map<string, Map<string, string[]>>();
  for (const source of sources) {
    let section: Map<string, string[]> | undefined;
    for (const line of logicalLines(source.text)) {
      const header = /^\[([^\]]+)\]$/.exec(line);
      if (header?.[1] !== undefined) {
        const name = header[1];
        section = sections.get(name) ?? new Map<string, string[]>();
        sections.set(name, section);
        continue;
      }
      const eq = line.indexOf('=');
      if (section === undefined || eq <= 0) {
        continue;
      }
      const key = line.slice(0, eq).trim();
      const value = line.slice(eq + 1).trim();
      if (value === '') {
        // An empty assignment resets a list setting (e.g. ExecStart= in a drop-in).
        section.set(key, []);
      } else {
        section.set(key, [...(section.get(key) ?? []), value]);
      }
    }
  }
  return sections;
}

/** The service definition of a unit's sources. */
export function serviceDefinition(sources: UnitSources): ServiceDefinition {
  const settings = parseUnit([sources.fragment, ...sources.dropins]);
  const unit = settings.get('Unit');
  const service = settings.get('Service');
  const install = settings.get('Install');
  const last = (section: ReadonlyMap<string, readonly string[]> | undefined, key: string): string | undefined => {
    const values = section?.get(key);
    return values === undefined ? undefined : values[values.length - 1];
  };
  const list = (section: ReadonlyMap<string, readonly string[]> | undefined, key: string): string[] =>
    [...(section?.get(key) ?? [])];
  const environment: Record<string, string> = {};
  for (const value of list(service, 'Environment')) {
    Object.assign(environment, parseEnvironmentAssignments(value));
  }
  const type = last(service, 'Type') ?? 'simple';
  return {
    name: sources.name,
    description: last(unit, 'Description') ?? sources.name,
    type: (['simple', 'exec', 'notify', 'forking', 'oneshot', 'idle'].includes(type) ? type : 'simple') as ServiceDefinition['type'],
    execStartPre: list(service, 'ExecStartPre'),
    execStart: list(service, 'ExecStart'),
    execStartPost: list(service, 'ExecStartPost'),
    environment,
    environmentFiles: list(service, 'EnvironmentFile').flatMap((value) => splitWords(value)).map((path) =>
      path.startsWith('-') ? { path: path.slice(1), optional: true } : { path, optional: false }),
    workingDirectory: (last(service, 'WorkingDirectory') ?? '/').replace(/^-/, ''),
    restart: (last(service, 'Restart') ?? 'no') as ServiceDefinition['restart'],
    restartSec: parseTimeSpan(last(service, 'RestartSec') ?? '100ms'),
    remainAfterExit: parseBoolean(last(service, 'RemainAfterExit') ?? 'no'),
    timeoutStopSec: parseTimeSpan(last(service, 'TimeoutStopSec') ?? '90s'),
    wantedBy: list(install, 'WantedBy').flatMap((value) => splitWords(value)),
    requiredBy: list(install, 'RequiredBy').flatMap((value) => splitWords(value)),
    hasInstallSection: install !== undefined && install.size > 0,
  };
}

/**
 * Splits an Exec line into words and expands variables as systemd does:
 * `${VAR}` inside a word, `$VAR` alone as several words (split on
 * whitespace), an unset variable as nothing. Prefix characters `-@:+!` on the
 * executable are understood (`-`: ignore failure).
 */
export function parseExecLine(line: string, env: Readonly<Record<string, string>>, unitName = ''): ExecCommand {
  let rest = line.trim();
  let ignoreFailure = false;
  let expand = true;
  while (/^[-@:+!]/.test(rest)) {
    if (rest.startsWith('-')) {
      ignoreFailure = true;
    }
    if (rest.startsWith(':')) {
      expand = false;
    }
    rest = rest.slice(1);
  }
  const argv: string[] = [];
  for (const word of splitWords(rest, true)) {
    const specified = word.text.replaceAll('%n', unitName).replaceAll('%N', unitName.replace(/\.[^.]+$/, '')).replaceAll('%%', '%');
    if (!expand) {
      argv.push(specified);
      continue;
    }
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(specified);
    if (bare?.[1] !== undefined && !word.quoted) {
      argv.push(...(env[bare[1]] ?? '').split(/\s+/).filter(Boolean));
      continue;
    }
    argv.push(specified.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, variable: string) => env[variable] ?? ''));
  }
  return { argv, ignoreFailure, text: line.trim() };
}

/** `A=1 "B=two words"` → `{ A: '1', B: 'two words' }` (Environment= syntax). */
export function parseEnvironmentAssignments(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of splitWords(value)) {
    const eq = word.indexOf('=');
    if (eq > 0) {
      out[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  return out;
}

/** Parses an EnvironmentFile= (KEY=VALUE lines, `#`/`;` comments, optional quotes). */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of logicalLines(text)) {
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (match?.[1] === undefined) {
      continue;
    }
    let value = match[2] ?? '';
    const quoted = /^"(.*)"$/s.exec(value) ?? /^'(.*)'$/s.exec(value);
    if (quoted?.[1] !== undefined) {
      value = quoted[1];
    }
    out[match[1]] = value;
  }
  return out;
}

/** `90s`, `1min 30s`, `100ms`, `5` (seconds) → seconds. */
export function parseTimeSpan(value: string): number {
  const units: Record<string, number> = {
    '': 1, us: 1e-6, ms: 1e-3, s: 1, sec: 1, second: 1, seconds: 1,
    m: 60, min: 60, minute: 60, minutes: 60, h: 3600, hr: 3600, hour: 3600, hours: 3600,
  };
  if (value.trim() === 'infinity') {
    return Number.POSITIVE_INFINITY;
  }
  let total = 0;
  for (const match of value.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]*)/g)) {
    total += Number(match[1]) * (units[match[2] ?? ''] ?? 1);
  }
  return total;
}

function parseBoolean(value: string): boolean {
  return ['1', 'yes', 'true', 'on'].includes(value.trim().toLowerCase());
}

/** Joins `\`-continued lines and drops comments and blank lines. */
function logicalLines(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const trimmed = line.trim();
    if (pending === '' && (trimmed.startsWith('#') || trimmed.startsWith(';'))) {
      continue;
    }
    if (trimmed.endsWith('\\')) {
      pending += `${trimmed.slice(0, -1)} `;
      continue;
    }
    const full = (pending + trimmed).trim();
    pending = '';
    if (full !== '') {
      out.push(full);
    }
  }
  if (pending.trim() !== '') {
    out.push(pending.trim());
  }
  return out;
}

function splitWords(value: string): string[];
function splitWords(value: string, withQuoting: true): { text: string; quoted: boolean }[];
function splitWords(value: string, withQuoting = false): string[] | { text: string; quoted: boolean }[] {
  const words: { text: string; quoted: boolean }[] = [];
  let current = '';
  let quote: '"' | "'" | null = null;
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < value.length; i += 1) {
    const char = value[i] ?? '';
    if (quote !== null) {
      if (char === quote) {
        quote = null;
      } else if (char === '\\' && quote === '"' && i + 1 < value.length) {
        i += 1;
        current += value[i] ?? '';
      } else {
        current += char;
      }
      continue;
    }
    if (char === '"' || char === "'") {
      quote = char;
      inWord = true;
      quoted = true;
      continue;
    }
    if (/\s/.test(char)) {
      if (inWord) {
        words.push({ text: current, quoted });
      }
      current = '';
      inWord = false;
      quoted = false;
      continue;
    }
    if (char === '\\' && i + 1 < value.length) {
      i += 1;
      current += value[i] ?? '';
      inWord = true;
      continue;
    }
    current += char;
    inWord = true;
  }
  if (inWord) {
    words.push({ text: current, quoted });
  }
  return withQuoting ? words : words.map((word) => word.text);
}

function readDropins(name: string): UnitSource[] {
  const byName = new Map<string, UnitSource>();
  for (const dir of [...UNIT_DIRS].reverse()) {
    const dropinDir = join(dir, `${name}.d`);
    let entries: string[];
    try {
      entries = readdirSync(onHost(dropinDir));
    } catch {
      continue;
    }
    for (const entry of entries.filter((file) => file.endsWith('.conf'))) {
      const path = join(dropinDir, entry);
      const text = readText(path);
      if (text !== null) {
        // /etc overrides /run for a drop-in of the same name.
        byName.set(entry, { path, text });
      }
    }
  }
  return [...byName.keys()].sort().map((key) => byName.get(key) as UnitSource);
}

function readText(path: string): string | null {
  try {
    return readFileSync(onHost(path), 'utf8');
  } catch {
    return null;
  }
}
