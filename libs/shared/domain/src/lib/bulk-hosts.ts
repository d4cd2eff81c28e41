import { type CodedText, type Message, bare, message } from '@ccos/shared/messages';
/**
 * Many hosts at once: a pasted or uploaded list (CSV, or one host per line) or an address
 * range with a hostname pattern, turned into rows, and every row checked before anything is
 * stored. Pure, so the console shows the same problems on the same rows as the API.
 */
import {
  type Label,
  type Problem,
  TAINT_EFFECTS,
  type Taint,
  type TaintEffect,
  checkHostname,
  checkIp,
  checkNodeLabels,
  checkPort,
  checkSshUser,
  checkTaints,
  isIPv4,
  shorten,
} from './validation';

/** Most rows one request may carry (a few racks). */
export const MAX_BULK_ROWS = 500;
/** Most addresses one range may span. */
export const MAX_RANGE_ADDRESSES = 256;

export type BulkField = 'row' | 'hostname' | 'ip' | 'sshPort' | 'sshUser' | 'labels' | 'taints' | 'credentials';

export interface BulkProblem {
  readonly field: BulkField;
  readonly message: string;
  /** The message by its code, where the text is coded (clients word it in their language). */
  readonly coded?: Message;
}

function bulkProblem(field: BulkField, text: CodedText): BulkProblem {
  return { field, message: text.message, coded: bare(text) };
}

/** One host as entered; `line` is 1-based in the pasted text (or the position in a range). */
export interface BulkHostRow {
  readonly line: number;
  readonly hostname: string;
  readonly ip: string;
  readonly sshPort: number;
  readonly sshUser: string;
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
}

export interface CheckedRow {
  readonly row: BulkHostRow;
  readonly problems: readonly BulkProblem[];
}

export interface RowDefaults {
  readonly sshPort: number;
  readonly sshUser: string;
}

export const DEFAULT_ROW_DEFAULTS: RowDefaults = { sshPort: 22, sshUser: 'root' };

const COLUMNS = ['hostname', 'ip', 'port', 'user', 'labels', 'taints'] as const;
type Column = (typeof COLUMNS)[number];
const COLUMN_ALIASES: Readonly<Record<string, Column>> = {
  hostname: 'hostname', host: 'hostname', name: 'hostname',
  ip: 'ip', address: 'ip', addr: 'ip',
  port: 'port', sshport: 'port', ssh_port: 'port',
  user: 'user', sshuser: 'user', ssh_user: 'user',
  labels: 'labels', label: 'labels',
  taints: 'taints', taint: 'taints',
};

/**
 * Parses a host list: CSV (`hostname,ip,port,user,labels,taints`, an optional header naming
 * the columns in any order, double quotes around fields with commas) or lines of
 * whitespace-separated fields in the same order. Blank lines and `#` comments are skipped.
 * Labels are `key=value` separated by `;` (or spaces in a quoted field), taints
 * `key[=value]:Effect` likewise. Each row comes with the problems found in it alone;
 * {@link checkBulkRows} adds the ones across rows and the cluster.
 */
export function parseHostList(text: string, defaults: RowDefaults = DEFAULT_ROW_DEFAULTS): CheckedRow[] {
  const lines = text.split(/\r\n|\n|\r/);
  let columns: readonly Column[] = COLUMNS;
  const rows: CheckedRow[] = [];
  let headerSeen = false;
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) {
      return;
    }
    const fields = trimmed.includes(',') || trimmed.includes('"') ? splitCsv(trimmed) : trimmed.split(/\s+/);
    if (!headerSeen && rows.length === 0 && isHeader(fields)) {
      headerSeen = true;
      const named = fields.map((field) => COLUMN_ALIASES[field.trim().toLowerCase()]);
      columns = named.filter((column): column is Column => column !== undefined);
      return;
    }
    rows.push(rowFrom(line, fields, columns, defaults));
  });
  return rows;
}

function isHeader(fields: readonly string[]): boolean {
  const first = fields[0]?.trim().toLowerCase() ?? '';
  return first in COLUMN_ALIASES && fields.every((field) => field.trim().toLowerCase() in COLUMN_ALIASES);
}

/** Splits one CSV line (RFC 4180 quoting within the line). */
function splitCsv(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index];
    if (quoted) {
      if (char === '"' && line[index + 1] === '"') {
        current += '"';
        index += 1;
      } else if (char === '"') {
        quoted = false;
      } else {
        current += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === ',') {
      fields.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  fields.push(current.trim());
  return fields;
}

function rowFrom(line: number, fields: readonly string[], columns: readonly Column[], defaults: RowDefaults): CheckedRow {
  const problems: BulkProblem[] = [];
  const value = (column: Column): string => {
    const at = columns.indexOf(column);
    return at >= 0 ? (fields[at] ?? '').trim() : '';
  };
  if (fields.length > columns.length) {
    problems.push(bulkProblem('row', message('bulk.tooManyFields', { count: fields.length, max: columns.length, columns: columns.join(', ') })));
  }
  const portText = value('port');
  let sshPort = defaults.sshPort;
  if (portText !== '') {
    sshPort = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
    if (Number.isNaN(sshPort)) {
      problems.push(bulkProblem('sshPort', message('validation.notPort', { value: `"${shorten(portText)}"` })));
    }
  }
  const labels = parseLabels(value('labels'));
  const taints = parseTaints(value('taints'), problems);
  return {
    row: { line, hostname: value('hostname'), ip: value('ip'), sshPort: Number.isNaN(sshPort) ? 0 : sshPort, sshUser: value('user') || defaults.sshUser, labels, taints },
    problems,
  };
}

function items(text: string): string[] {
  return text.split(/[;\s]+/).filter((item) => item !== '');
}

function parseLabels(text: string): Label[] {
  return items(text).map((item) => {
    const eq = item.indexOf('=');
    return eq >= 0 ? { key: item.slice(0, eq), value: item.slice(eq + 1) } : { key: item, value: '' };
  });
}

function parseTaints(text: string, problems: BulkProblem[]): Taint[] {
  const taints: Taint[] = [];
  for (const item of items(text)) {
    const colon = item.lastIndexOf(':');
    if (colon < 0) {
      problems.push(bulkProblem('taints', message('bulk.taintWithoutEffect', { taint: shorten(item), effects: TAINT_EFFECTS.join('|') })));
      continue;
    }
    const head = item.slice(0, colon);
    const eq = head.indexOf('=');
    taints.push({
      key: eq >= 0 ? head.slice(0, eq) : head,
      value: eq >= 0 ? head.slice(eq + 1) : null,
      effect: item.slice(colon + 1) as TaintEffect,
    });
  }
  return taints;
}

export interface AddressRange {
  /** `198.18.0.10-198.18.0.29`, or `198.18.0.10-29` for the last octet. */
  readonly range: string;
  /** The hostname of each address: `{n}` its number (from `firstNumber`), `{octet}` its last octet, `{ip}` the address with dashes. */
  readonly hostnamePattern: string;
  /** The number `{n}` takes for the first address (default 1). */
  readonly firstNumber?: number;
}

export type RangeExpansion = { readonly ok: true; readonly rows: CheckedRow[] } | { readonly ok: false; readonly problem: string; readonly coded: Message };

function rangeProblem(text: CodedText): RangeExpansion {
  return { ok: false, problem: text.message, coded: bare(text) };
}

/** Expands an IPv4 range with a hostname pattern into rows (`198.18.0.10-198.18.0.29` with `w-{n}` → w-1 … w-20). */
export function expandAddressRange(input: AddressRange, defaults: RowDefaults & { readonly labels?: readonly Label[]; readonly taints?: readonly Taint[] } = DEFAULT_ROW_DEFAULTS): RangeExpansion {
  const match = /^\s*([0-9.]+)\s*-\s*([0-9.]+)\s*$/.exec(input.range);
  if (!match) {
    return rangeProblem(message('batch.range.notRange', { range: shorten(input.range) }));
  }
  const from = match[1];
  const to = match[2].includes('.') ? match[2] : `${from.split('.').slice(0, 3).join('.')}.${match[2]}`;
  if (!isIPv4(from) || !isIPv4(to)) {
    return rangeProblem(message('batch.range.notIpv4', { range: shorten(input.range) }));
  }
  const first = ipv4ToNumber(from);
  const last = ipv4ToNumber(to);
  if (last < first) {
    return rangeProblem(message('batch.range.backwards', { from, to }));
  }
  const count = last - first + 1;
  if (count > MAX_RANGE_ADDRESSES) {
    return rangeProblem(message('batch.range.tooLarge', { count: String(count), max: String(MAX_RANGE_ADDRESSES) }));
  }
  const unknown = /\{(?!(?:n|octet|ip)\})[^}]*\}/.exec(input.hostnamePattern);
  if (unknown) {
    return rangeProblem(message('batch.range.unknownPlaceholder', { placeholder: shorten(unknown[0]) }));
  }
  if (!/\{(n|octet|ip)\}/.test(input.hostnamePattern) && count > 1) {
    return rangeProblem(message('batch.range.needsPlaceholder'));
  }
  const start = input.firstNumber ?? 1;
  if (!Number.isInteger(start) || start < 0 || start > 1_000_000) {
    return rangeProblem(message('batch.range.firstNumber', { min: '0', max: '1000000' }));
  }
  const rows: CheckedRow[] = [];
  for (let offset = 0; offset < count; offset += 1) {
    const ip = numberToIpv4(first + offset);
    const hostname = input.hostnamePattern
      .replace(/\{n\}/g, String(start + offset))
      .replace(/\{octet\}/g, ip.split('.')[3])
      .replace(/\{ip\}/g, ip.replace(/\./g, '-'));
    rows.push({
      row: { line: offset + 1, hostname, ip, sshPort: defaults.sshPort, sshUser: defaults.sshUser, labels: defaults.labels ?? [], taints: defaults.taints ?? [] },
      problems: [],
    });
  }
  return { ok: true, rows };
}

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
}

function numberToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** Hosts the cluster already has (not removed): a new row may use neither their names nor their addresses. */
export interface ExistingHosts {
  readonly hostnames: ReadonlySet<string>;
  readonly ips: ReadonlySet<string>;
}

/**
 * Checks every row: each field on its own, then duplicates within the batch and against the
 * cluster. Returns the rows with all their problems; nothing is dropped or merged.
 */
export function checkBulkRows(rows: readonly CheckedRow[], existing: ExistingHosts): CheckedRow[] {
  const hostnameLines = linesBy(rows, (row) => row.hostname);
  const ipLines = linesBy(rows, (row) => canonicalIp(row.ip));
  const tooMany: BulkProblem[] = rows.length > MAX_BULK_ROWS ? [bulkProblem('row', message('bulk.tooManyRows', { count: rows.length, max: MAX_BULK_ROWS }))] : [];
  return rows.map(({ row, problems }) => {
    const found: BulkProblem[] = [...problems, ...tooMany];
    const add = (field: BulkField, problem: Problem) => {
      if (problem) {
        found.push(bulkProblem(field, problem));
      }
    };
    add('hostname', row.hostname === '' ? message('validation.missing') : checkHostname(row.hostname));
    add('ip', row.ip === '' ? message('validation.missing') : checkIp(row.ip));
    if (!found.some((problem) => problem.field === 'sshPort')) {
      add('sshPort', checkPort(row.sshPort));
    }
    add('sshUser', checkSshUser(row.sshUser));
    if (!found.some((problem) => problem.field === 'labels')) {
      add('labels', checkNodeLabels(row.labels));
    }
    if (!found.some((problem) => problem.field === 'taints')) {
      add('taints', checkTaints(row.taints));
    }
    if (row.hostname !== '') {
      const others = (hostnameLines.get(row.hostname) ?? []).filter((line) => line !== row.line);
      if (others.length > 0) {
        add('hostname', message('bulk.alsoOnLine', { value: `"${shorten(row.hostname)}"`, lines: others.join(', ') }));
      }
      if (existing.hostnames.has(row.hostname)) {
        add('hostname', message('bulk.hostnameTaken', { hostname: shorten(row.hostname) }));
      }
    }
    if (row.ip !== '' && checkIp(row.ip) === null) {
      const ip = canonicalIp(row.ip);
      const others = (ipLines.get(ip) ?? []).filter((line) => line !== row.line);
      if (others.length > 0) {
        add('ip', message('bulk.alsoOnLine', { value: row.ip, lines: others.join(', ') }));
      }
      if ([...existing.ips].some((known) => canonicalIp(known) === ip)) {
        add('ip', message('bulk.ipTaken', { ip: row.ip }));
      }
    }
    return { row, problems: found };
  });
}

function linesBy(rows: readonly CheckedRow[], key: (row: BulkHostRow) => string): Map<string, number[]> {
  const lines = new Map<string, number[]>();
  for (const { row } of rows) {
    const value = key(row);
    if (value !== '') {
      lines.set(value, [...(lines.get(value) ?? []), row.line]);
    }
  }
  return lines;
}

/** IPv6 addresses compare case-insensitively; IPv4 as written (leading zeros are refused anyway). */
function canonicalIp(ip: string): string {
  return ip.toLowerCase();
}
