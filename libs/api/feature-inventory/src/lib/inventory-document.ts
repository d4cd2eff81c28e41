import Ajv, { type ErrorObject } from 'ajv';
import { parseDocument } from 'yaml';
import { checkHostname, checkIp, checkNodeLabels, checkTaints, type Label, type Taint, type TaintEffect } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import { INVENTORY_SCHEMA } from './inventory.schema';

/** Where the applying machine reads a host's SSH secret. */
export interface InventoryCredentialRef {
  readonly passwordFile?: string;
  readonly passwordEnv?: string;
  readonly privateKeyFile?: string;
  readonly privateKeyEnv?: string;
  readonly passphraseFile?: string;
  readonly passphraseEnv?: string;
}

export interface InventoryHost {
  readonly hostname: string;
  /** Null only for a host to remove. */
  readonly ip: string | null;
  readonly sshPort: number;
  readonly sshUser: string;
  readonly credential: InventoryCredentialRef | null;
  /** Sorted by key. */
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
  /** The pool the host is a spare of; null for a host of its own. */
  readonly pool: string | null;
  readonly remove: boolean;
}

/** A node group as the file defines it (the profile in bytes). */
export interface InventoryPool {
  readonly name: string;
  readonly minSize: number;
  readonly maxSize: number;
  readonly profile: { readonly cpuCores: number; readonly memoryBytes: number; readonly ephemeralStorageBytes: number; readonly maxPods: number; readonly arch: string };
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
}

export interface Inventory {
  readonly cluster: string;
  readonly pools: readonly InventoryPool[];
  readonly hosts: readonly InventoryHost[];
}

export type InventoryParse = { readonly ok: true; readonly inventory: Inventory } | { readonly ok: false; readonly problems: readonly CodedText[] };

/** Keys that would put a secret into the file: refused with their own message, before any other. */
const INLINE_SECRETS = new Set(['password', 'privateKey', 'passphrase', 'token']);
const PRIMARY_CREDENTIALS = ['passwordFile', 'passwordEnv', 'privateKeyFile', 'privateKeyEnv'] as const;
const MAX_PROBLEMS = 20;

const validate = new Ajv({ allErrors: true, strict: true }).compile(INVENTORY_SCHEMA);

type RawLabels = Record<string, string>;
type RawTaints = Array<{ key: string; value?: string; effect: TaintEffect }>;

interface RawPool {
  name: string;
  minSize?: number;
  maxSize: number;
  profile: { cpuCores: number; memoryGiB: number; ephemeralStorageGiB?: number; maxPods?: number; arch?: string };
  labels?: RawLabels;
  taints?: RawTaints;
}

interface RawHost {
  hostname: string;
  pool?: string;
  ip?: string;
  sshPort?: number;
  sshUser?: string;
  credential?: InventoryCredentialRef;
  labels?: RawLabels;
  taints?: RawTaints;
  remove?: boolean;
}
interface RawInventory {
  cluster: string;
  defaults?: { sshUser?: string; sshPort?: number; credential?: InventoryCredentialRef };
  pools?: RawPool[];
  hosts: RawHost[];
}

export const GIB = 2 ** 30;
/** createNodeGroup's defaults for what a pool's profile leaves out. */
const PROFILE_DEFAULTS = { ephemeralStorageGiB: 20, maxPods: 110, arch: 'amd64' };

const labelsOf = (labels: RawLabels | undefined): Label[] => Object.entries(labels ?? {}).map(([key, value]) => ({ key, value })).sort((a, b) => a.key.localeCompare(b.key));
const taintsOf = (taints: RawTaints | undefined): Taint[] => (taints ?? []).map(({ key, value, effect }) => ({ key, value: value ?? null, effect }));

/**
 * Reads an inventory file (YAML or JSON) and checks it whole: the schema (unknown fields, inline
 * secrets, types), then what a schema cannot say (host names, addresses, labels and taints by the
 * rules addNode applies, a host or an address named twice, one credential per host). Every
 * problem is returned, each with where it is; nothing is half-read.
 */
export function parseInventory(text: string): InventoryParse {
  const document = parseDocument(text, { uniqueKeys: true });
  const syntax = document.errors[0];
  if (syntax) {
    const position = syntax.linePos?.[0];
    const code = syntax.code === 'DUPLICATE_KEY' ? 'inventory.duplicateKey' : 'inventory.syntax';
    return { ok: false, problems: [message(code, { line: position?.line ?? 0, column: position?.col ?? 0 })] };
  }
  const raw: unknown = document.toJS({ maxAliasCount: 64 });
  if (!validate(raw)) {
    return { ok: false, problems: schemaProblems(raw, validate.errors ?? []) };
  }
  return checked(raw as RawInventory);
}

function checked(raw: RawInventory): InventoryParse {
  const problems: CodedText[] = [];
  const at = (index: number, host: RawHost, field: string | null, problem: CodedText) =>
    problems.push(message('inventory.at', { where: whereOf(`hosts[${index}]${field ? `.${field}` : ''}`, host.hostname), problem }));
  const pools = (raw.pools ?? []).map((pool, index): InventoryPool => {
    const place = (field: string | null, problem: CodedText) => problems.push(message('inventory.at', { where: whereOf(`pools[${index}]${field ? `.${field}` : ''}`, pool.name), problem }));
    const earlier = (raw.pools ?? []).findIndex((other) => other.name === pool.name);
    if (earlier !== index) {
      place('name', message('inventory.duplicatePool', { first: `pools[${earlier}]` }));
    }
    if ((pool.minSize ?? 0) > pool.maxSize) {
      place('maxSize', message('nodeGroup.sizes'));
    }
    const labels = labelsOf(pool.labels);
    const taints = taintsOf(pool.taints);
    const marksProblem = checkNodeLabels(labels) ?? checkTaints(taints);
    if (marksProblem) {
      place(checkNodeLabels(labels) ? 'labels' : 'taints', marksProblem);
    }
    const profile = { ...PROFILE_DEFAULTS, ...pool.profile };
    return {
      name: pool.name,
      minSize: pool.minSize ?? 0,
      maxSize: pool.maxSize,
      profile: { cpuCores: profile.cpuCores, memoryBytes: Math.round(profile.memoryGiB * GIB), ephemeralStorageBytes: Math.round(profile.ephemeralStorageGiB * GIB), maxPods: profile.maxPods, arch: profile.arch },
      labels,
      taints,
    };
  });
  const firstByName = new Map<string, number>();
  const firstByIp = new Map<string, number>();
  const hosts = raw.hosts.map((host, index): InventoryHost => {
    const hostnameProblem = checkHostname(host.hostname);
    if (hostnameProblem) {
      at(index, host, 'hostname', hostnameProblem);
    }
    const earlier = firstByName.get(host.hostname);
    if (earlier === undefined) {
      firstByName.set(host.hostname, index);
    } else {
      at(index, host, 'hostname', message('inventory.duplicateHost', { first: `hosts[${earlier}]` }));
    }
    const remove = host.remove === true;
    if (host.ip === undefined && !remove) {
      at(index, host, 'ip', message('inventory.ipRequired'));
    }
    if (host.ip !== undefined) {
      const ipProblem = checkIp(host.ip);
      if (ipProblem) {
        at(index, host, 'ip', ipProblem);
      }
      const earlierIp = firstByIp.get(host.ip);
      if (earlierIp === undefined) {
        firstByIp.set(host.ip, index);
      } else {
        at(index, host, 'ip', message('inventory.duplicateIp', { ip: host.ip, first: `hosts[${earlierIp}]` }));
      }
    }
    const labels = labelsOf(host.labels);
    const taints = taintsOf(host.taints);
    if (host.pool !== undefined && !pools.some((pool) => pool.name === host.pool)) {
      at(index, host, 'pool', message('inventory.unknownPool', { pool: host.pool }));
    }
    if (host.pool !== undefined && (host.labels !== undefined || host.taints !== undefined)) {
      at(index, host, 'pool', message('inventory.poolMarks', { pool: host.pool }));
    }
    const labelProblem = checkNodeLabels(labels);
    if (labelProblem) {
      at(index, host, 'labels', labelProblem);
    }
    const taintProblem = checkTaints(taints);
    if (taintProblem) {
      at(index, host, 'taints', taintProblem);
    }
    const credential = host.credential ?? raw.defaults?.credential ?? null;
    if (credential && PRIMARY_CREDENTIALS.filter((key) => credential[key] !== undefined).length !== 1) {
      at(index, host, 'credential', message('inventory.oneCredential', { choices: PRIMARY_CREDENTIALS.join(', ') }));
    }
    return {
      hostname: host.hostname,
      ip: host.ip ?? null,
      sshPort: host.sshPort ?? raw.defaults?.sshPort ?? 22,
      sshUser: host.sshUser ?? raw.defaults?.sshUser ?? 'root',
      credential,
      labels,
      taints,
      pool: host.pool ?? null,
      remove,
    };
  });
  return problems.length > 0 ? { ok: false, problems: problems.slice(0, MAX_PROBLEMS) } : { ok: true, inventory: { cluster: raw.cluster, pools, hosts } };
}

/** Where in the file: the path, and the host's name when it has one. */
function whereOf(path: string, hostname: string | null): string {
  return hostname ? `${path} (${hostname})` : path;
}

/** `/hosts/2/credential` → `hosts[2].credential`. */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function hostnameAt(raw: unknown, pointer: string): string | null {
  const match = /^\/hosts\/(\d+)/.exec(pointer);
  const hosts = (raw as { hosts?: unknown } | null)?.hosts;
  const host = match && Array.isArray(hosts) ? (hosts[Number(match[1])] as { hostname?: unknown } | undefined) : undefined;
  return typeof host?.hostname === 'string' ? host.hostname : null;
}

function schemaProblems(raw: unknown, errors: readonly ErrorObject[]): CodedText[] {
  const problems = errors.map((error): { secret: boolean; text: CodedText } => {
    const path = pathOf(error.instancePath);
    const hostname = hostnameAt(raw, error.instancePath);
    const place = (problem: CodedText) => message('inventory.at', { where: whereOf(path || '/', hostname), problem });
    switch (error.keyword) {
      case 'additionalProperties': {
        const field = String((error.params as { additionalProperty: string }).additionalProperty);
        return INLINE_SECRETS.has(field)
          ? { secret: true, text: place(message('inventory.inlineSecret', { field })) }
          : { secret: false, text: place(message('inventory.unknownField', { field })) };
      }
      case 'required':
        return { secret: false, text: place(message('inventory.missingField', { field: String((error.params as { missingProperty: string }).missingProperty) })) };
      case 'const':
        return { secret: false, text: place(message('inventory.mustBe', { value: String((error.params as { allowedValue: unknown }).allowedValue) })) };
      case 'enum':
        return { secret: false, text: place(message('inventory.oneOf', { values: ((error.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ') })) };
      case 'type':
        return { secret: false, text: place(message('inventory.wrongType', { type: String((error.params as { type: unknown }).type) })) };
      default:
        return { secret: false, text: place(message('inventory.invalidValue')) };
    }
  });
  // An inline secret is the problem to fix first; the rest may be its consequences.
  return [...problems.filter((problem) => problem.secret), ...problems.filter((problem) => !problem.secret)].map((problem) => problem.text).slice(0, MAX_PROBLEMS);
}
