import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { isJsonObject, type JsonObject, type JsonValue } from '@ccos/agent/util-host';
import { decodeDataUrl } from './data-url';

/** Who should own a path: numeric ids, or names resolved against /etc/passwd and /etc/group. */
export interface Ownership {
  readonly userId?: number;
  readonly userName?: string;
  readonly groupId?: number;
  readonly groupName?: string;
}

export interface PlannedDirectory extends Ownership {
  readonly path: string;
  readonly mode: number;
  readonly overwrite: boolean;
}

export interface PlannedFile extends Ownership {
  readonly path: string;
  readonly mode: number;
  readonly overwrite: boolean;
  /** null: keep what is there (or create empty). */
  readonly contents: Buffer | null;
  readonly append: readonly Buffer[];
}

export interface PlannedLink extends Ownership {
  readonly path: string;
  readonly target: string;
  readonly overwrite: boolean;
}

export interface PlannedUnit {
  readonly name: string;
  /** true: enable; false: disable; undefined: leave as it is. */
  readonly enabled?: boolean;
  readonly mask: boolean;
  readonly contents?: string;
  readonly dropins: readonly { readonly name: string; readonly contents: string }[];
}

/** What applying an Ignition config does on this host, decoded and checked before anything is written. */
export interface IgnitionPlan {
  readonly version: string;
  readonly directories: readonly PlannedDirectory[];
  readonly files: readonly PlannedFile[];
  readonly links: readonly PlannedLink[];
  readonly units: readonly PlannedUnit[];
  /** Sections the agent does not apply on an installed host, e.g. "passwd.users (1)". */
  readonly skipped: readonly string[];
}

/** Thrown when a config cannot be applied; `code` tells why. */
export class IgnitionError extends Error {
  constructor(
    readonly code: 'IGNITION_NOT_IGNITION' | 'IGNITION_UNSUPPORTED',
    message: string,
  ) {
    super(message);
    this.name = 'IgnitionError';
  }
}

const UNIT_NAME = /^[A-Za-z0-9:_.@\\-]{1,200}\.(service|socket|timer|target|path|mount|automount|slice|swap|device|scope)$/;
const DROPIN_NAME = /^[A-Za-z0-9:_.@-]{1,200}\.conf$/;

/** Whether a parsed document is an Ignition config of spec 3.x. */
export function ignitionVersion(value: unknown): string | null {
  if (!isJsonObject(value) || !isJsonObject(value['ignition'])) {
    return null;
  }
  const version = value['ignition']['version'];
  return typeof version === 'string' && /^3\.\d+\.\d+(-experimental)?$/.test(version) ? version : null;
}

/**
 * Turns an Ignition spec 3 config into a plan: paths checked (absolute,
 * normalised), every `data:` URL decoded (base64 and percent-encoded,
 * gzip, verification hashes), defaults applied as Ignition does (files
 * 0644, directories 0755, overwrite false).
 *
 * @see https://coreos.github.io/ignition/configuration-v3_2/
 */
export function planIgnition(value: unknown): IgnitionPlan {
  const version = ignitionVersion(value);
  if (version === null || !isJsonObject(value)) {
    throw new IgnitionError('IGNITION_NOT_IGNITION', 'the document has no ignition.version 3.x');
  }
  const ignition = value['ignition'] as JsonObject;
  const config = isJsonObject(ignition['config']) ? ignition['config'] : {};
  const merge = Array.isArray(config['merge']) ? config['merge'] : [];
  if (merge.length > 0 || isJsonObject(config['replace'])) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', 'this is a pointer config (ignition.config.merge/replace): the machine config server should serve the full worker config');
  }
  const storage = isJsonObject(value['storage']) ? value['storage'] : {};
  const systemd = isJsonObject(value['systemd']) ? value['systemd'] : {};
  const skipped: string[] = [];
  const passwd = isJsonObject(value['passwd']) ? value['passwd'] : {};
  for (const key of ['users', 'groups']) {
    const list = passwd[key];
    if (Array.isArray(list) && list.length > 0) {
      skipped.push(`passwd.${key} (${list.length})`);
    }
  }
  for (const key of ['disks', 'raid', 'filesystems', 'luks']) {
    const list = storage[key];
    if (Array.isArray(list) && list.length > 0) {
      skipped.push(`storage.${key} (${list.length})`);
    }
  }
  if (Array.isArray(value['kernelArguments']) || isJsonObject(value['kernelArguments'])) {
    skipped.push('kernelArguments');
  }
  return {
    version,
    directories: list(storage['directories'], 'storage.directories').map((entry, index) => planDirectory(entry, `storage.directories[${index}]`)),
    files: list(storage['files'], 'storage.files').map((entry, index) => planFile(entry, `storage.files[${index}]`)),
    links: list(storage['links'], 'storage.links').map((entry, index) => planLink(entry, `storage.links[${index}]`)),
    units: list(systemd['units'], 'systemd.units').map((entry, index) => planUnit(entry, `systemd.units[${index}]`)),
    skipped,
  };
}

function list(value: JsonValue | undefined, where: string): JsonObject[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value) || !value.every(isJsonObject)) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where} must be a list of objects`);
  }
  return value as JsonObject[];
}

function checkPath(value: JsonValue | undefined, where: string): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value === '/' || posix.normalize(value) !== value || value.endsWith('/') || value.includes('\0')) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.path ${JSON.stringify(value)} is not an absolute, normalised path`);
  }
  return value;
}

function mode(value: JsonValue | undefined, fallback: number, where: string): number {
  if (value === undefined || value === null) {
    return fallback;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0o7777) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.mode ${JSON.stringify(value)} is not a permission mode`);
  }
  return value;
}

function ownership(entry: JsonObject): Ownership {
  const user = isJsonObject(entry['user']) ? entry['user'] : {};
  const group = isJsonObject(entry['group']) ? entry['group'] : {};
  return {
    ...(typeof user['id'] === 'number' ? { userId: user['id'] } : typeof user['name'] === 'string' ? { userName: user['name'] } : {}),
    ...(typeof group['id'] === 'number' ? { groupId: group['id'] } : typeof group['name'] === 'string' ? { groupName: group['name'] } : {}),
  };
}

/** Decodes one `contents`/`append` resource: data URL, optional gzip, optional verification hash. */
export function decodeResource(resource: JsonValue | undefined, where: string): Buffer | null {
  if (!isJsonObject(resource)) {
    return null;
  }
  const source = resource['source'];
  if (source === undefined || source === null) {
    return null;
  }
  if (typeof source !== 'string') {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.source is not a string`);
  }
  if (!source.startsWith('data:')) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(source)?.[1] ?? 'unknown';
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.source uses the ${scheme}: scheme; the agent applies inline data: URLs only`);
  }
  let data: Buffer;
  try {
    data = decodeDataUrl(source);
  } catch (error) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.source: ${(error as Error).message}`);
  }
  const compression = resource['compression'];
  if (compression === 'gzip') {
    try {
      data = gunzipSync(data);
    } catch (error) {
      throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}: gzip data does not decompress (${(error as Error).message})`);
    }
  } else if (compression !== undefined && compression !== null && compression !== '') {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.compression ${JSON.stringify(compression)} is not supported (only gzip)`);
  }
  const verification = isJsonObject(resource['verification']) ? resource['verification'] : {};
  const hash = verification['hash'];
  if (typeof hash === 'string' && hash !== '') {
    const match = /^(sha256|sha512)-([0-9a-f]+)$/.exec(hash);
    if (match === null) {
      throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.verification.hash ${JSON.stringify(hash)} is not sha256-<hex> or sha512-<hex>`);
    }
    // Ignition verifies the fetched (still compressed) resource; the data URL is that resource.
    const raw = compression === 'gzip' ? decodeDataUrl(source) : data;
    const actual = createHash(match[1] as string).update(raw).digest('hex');
    if (actual !== match[2]) {
      throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}: ${match[1]} is ${actual}, the config says ${match[2]}`);
    }
  }
  return data;
}

function planDirectory(entry: JsonObject, where: string): PlannedDirectory {
  return { path: checkPath(entry['path'], where), mode: mode(entry['mode'], 0o755, where), overwrite: entry['overwrite'] === true, ...ownership(entry) };
}

function planFile(entry: JsonObject, where: string): PlannedFile {
  const path = checkPath(entry['path'], where);
  const contents = decodeResource(entry['contents'], `${where}.contents`);
  const overwrite = entry['overwrite'] === true;
  if (overwrite && contents === null) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where} (${path}): overwrite needs contents.source`);
  }
  const append = (Array.isArray(entry['append']) ? entry['append'] : [])
    .map((resource, index) => decodeResource(resource, `${where}.append[${index}]`))
    .filter((data): data is Buffer => data !== null);
  return { path, mode: mode(entry['mode'], 0o644, where), overwrite, contents, append, ...ownership(entry) };
}

function planLink(entry: JsonObject, where: string): PlannedLink {
  const path = checkPath(entry['path'], where);
  if (entry['hard'] === true) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where} (${path}): hard links are not supported`);
  }
  const target = entry['target'];
  if (typeof target !== 'string' || target === '' || target.includes('\0')) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where} (${path}) has no target`);
  }
  return { path, target, overwrite: entry['overwrite'] === true, ...ownership(entry) };
}

function planUnit(entry: JsonObject, where: string): PlannedUnit {
  const name = entry['name'];
  if (typeof name !== 'string' || !UNIT_NAME.test(name)) {
    throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.name ${JSON.stringify(name)} is not a systemd unit name`);
  }
  const dropins = (Array.isArray(entry['dropins']) ? entry['dropins'] : []).flatMap((dropin, index) => {
    if (!isJsonObject(dropin) || typeof dropin['name'] !== 'string' || !DROPIN_NAME.test(dropin['name'])) {
      throw new IgnitionError('IGNITION_UNSUPPORTED', `${where}.dropins[${index}].name is not a drop-in file name (*.conf)`);
    }
    return typeof dropin['contents'] === 'string' ? [{ name: dropin['name'], contents: dropin['contents'] }] : [];
  });
  const enabled = entry['enabled'];
  return {
    name,
    ...(typeof enabled === 'boolean' ? { enabled } : {}),
    mask: entry['mask'] === true,
    ...(typeof entry['contents'] === 'string' ? { contents: entry['contents'] } : {}),
    dropins,
  };
}
