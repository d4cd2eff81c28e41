import type { HardwareFacts, HostDisk, HostNic } from '@ccos/shared/domain';
import type { RemoteCheck } from './remote-batch';
import type { ExecResult } from './remote-exec';
import { defineScript } from './remote-script';
import { remoteFailed } from './ssh-errors';
import type { SshSession } from './ssh-session';

/** What the installer checks on a host before it copies the agent. */
export interface RemoteFacts {
  /** `uname -m`, e.g. `x86_64`, `aarch64`. */
  readonly arch: string;
  /** `uname -r`. */
  readonly kernel: string;
  /** The kernel's host name (`uname -n`). */
  readonly hostname: string;
  readonly os: OsRelease;
  readonly disk: DiskSpace;
  readonly hardware: HardwareFacts;
}

/** The fields of os-release(5) we use; null when the file lacks them. */
export interface OsRelease {
  readonly id: string | null;
  readonly versionId: string | null;
  readonly prettyName: string | null;
  /** `ID_LIKE`, split on blanks (e.g. `["rhel", "fedora"]`). */
  readonly idLike: readonly string[];
}

/** Free space of the file system holding a folder. */
export interface DiskSpace {
  /** The folder asked about. */
  readonly path: string;
  /** The nearest existing folder at or above it, which `df` measured. */
  readonly measuredPath: string;
  readonly mountPoint: string;
  /** Bytes available to unprivileged users (`df`'s "Available"). */
  readonly freeBytes: number;
  readonly totalBytes: number;
}

/**
 * One round trip for all facts. Sections are introduced by marker lines so
 * that odd content (an os-release without a final newline, a file system
 * name with spaces) cannot shift the parse. `df -P` keeps each file system
 * on one line with 1024-byte blocks.
 */
const FACTS = defineScript('facts', [
  'echo "@@arch"; uname -m',
  'echo "@@kernel"; uname -r',
  'echo "@@hostname"; uname -n',
  'echo "@@os-release"',
  'if [ -r /etc/os-release ]; then cat /etc/os-release; elif [ -r /usr/lib/os-release ]; then cat /usr/lib/os-release; fi',
  'echo',
  'd=$1',
  'while [ ! -d "$d" ] && [ "$d" != / ]; do d=$(dirname -- "$d"); done',
  'echo "@@measured"; printf "%s\\n" "$d"',
  'echo "@@df"; df -Pk -- "$d"',
  // Hardware, from /proc and /sys, so no tool beyond the shell is needed (lsblk, ip and dmidecode may be missing).
  'echo "@@cpus"; getconf _NPROCESSORS_ONLN 2>/dev/null || grep -c ^processor /proc/cpuinfo',
  'echo "@@cpu-model"; grep -m1 -E "^(model name|Model|cpu model)[[:space:]]*:" /proc/cpuinfo | cut -d: -f2-',
  'echo "@@memory"; grep -m1 ^MemTotal: /proc/meminfo',
  'echo "@@disks"',
  'for b in /sys/block/*; do [ -e "$b/size" ] || continue; n=${b##*/}; case $n in loop*|ram*|sr*|zram*|fd*) continue;; esac; echo "$n $(cat "$b/size" 2>/dev/null) $(cat "$b/queue/rotational" 2>/dev/null)"; done',
  'echo "@@nics"',
  'for i in /sys/class/net/*; do n=${i##*/}; [ "$n" = lo ] && continue; [ -e "$i/address" ] || continue; echo "$n $(cat "$i/address" 2>/dev/null) $(cat "$i/operstate" 2>/dev/null)"; done',
  'echo "@@dmi-vendor"; cat /sys/class/dmi/id/sys_vendor 2>/dev/null',
  'echo "@@dmi-product"; cat /sys/class/dmi/id/product_name 2>/dev/null',
  'echo "@@dmi-serial"; cat /sys/class/dmi/id/product_serial 2>/dev/null',
  'echo "@@end"',
].join('\n'));

/**
 * Reads arch, kernel, host name, OS release and the free space of
 * `diskPath` (default `/`; a folder that does not exist yet is measured at
 * its nearest existing parent).
 */
export async function readRemoteFacts(session: SshSession, options: { readonly diskPath?: string } = {}): Promise<RemoteFacts> {
  const check = remoteFactsCheck(options.diskPath ?? '/');
  return check.read(await session.runScript(check.script, check.args, { timeoutMs: 30_000, sudo: false }), session.endpoint);
}

/** {@link readRemoteFacts} as a check for `runChecks`, to share one exec with others (it needs no sudo). */
export function remoteFactsCheck(diskPath: string): RemoteCheck<RemoteFacts> {
  if (!diskPath.startsWith('/') || /[\0\n]/.test(diskPath)) {
    throw new RangeError('diskPath must be an absolute path without newlines');
  }
  return {
    script: FACTS,
    args: [diskPath],
    read(result: ExecResult, endpoint: string): RemoteFacts {
      if (result.exitCode !== 0 && !result.stdout.includes('@@end')) {
        throw remoteFailed(endpoint, 'Reading host facts', `exit ${result.exitCode ?? result.signal ?? 'unknown'}: ${result.stderr.trim().slice(-300) || 'no output'}`);
      }
      try {
        return parseRemoteFacts(result.stdout, diskPath);
      } catch (error) {
        throw remoteFailed(endpoint, 'Reading host facts', `${(error as Error).message}. Output: ${result.stdout.slice(0, 300)}`);
      }
    },
  };
}

/** Parses the output of the facts script. Throws when a required section is missing or malformed. */
export function parseRemoteFacts(output: string, diskPath: string): RemoteFacts {
  const sections = splitSections(output);
  const one = (name: string) => {
    const value = (sections.get(name) ?? '').trim().split('\n')[0]?.trim() ?? '';
    if (value === '') {
      throw new Error(`no ${name} in the output`);
    }
    return value;
  };
  const measuredPath = one('measured');
  const df = parseDf(sections.get('df') ?? '');
  return {
    arch: one('arch'),
    kernel: one('kernel'),
    hostname: one('hostname'),
    os: parseOsRelease(sections.get('os-release') ?? ''),
    disk: { path: diskPath, measuredPath, ...df },
    hardware: parseHardware(sections),
  };
}

/** The hardware sections of the facts script; what a host does not tell is null or empty, never an error. */
function parseHardware(sections: ReadonlyMap<string, string>): HardwareFacts {
  const first = (name: string): string | null => {
    const line = (sections.get(name) ?? '').split('\n').map((text) => text.trim()).find((text) => text !== '');
    return line === undefined ? null : line.slice(0, 200);
  };
  const lines = (name: string) => (sections.get(name) ?? '').split('\n').map((line) => line.trim()).filter((line) => line !== '');
  const whole = (text: string | null): number | null => (text !== null && /^\d{1,15}$/.test(text) ? Number(text) : null);
  const memory = /^MemTotal:\s+(\d+)\s*kB$/i.exec(first('memory') ?? '');
  const disks = lines('disks').flatMap((line): HostDisk[] => {
    const [name = '', sectors, rotational] = line.split(/\s+/);
    const size = whole(sectors ?? null);
    // /sys/block sizes are in 512-byte sectors whatever the device's own sector size; an empty device (a card reader) is left out.
    return size === null || size === 0 ? [] : [{ name, sizeBytes: size * 512, rotational: rotational === '1' ? true : rotational === '0' ? false : null }];
  });
  const nics = lines('nics').map((line): HostNic => {
    const [name = '', mac, state] = line.split(/\s+/);
    return { name, mac: mac && /^[0-9a-f]{2}(:[0-9a-f]{2}){5,19}$/i.test(mac) && !/^(00:)+00$/.test(mac) ? mac.toLowerCase() : null, state: state || 'unknown' };
  });
  const dmi = (name: string): string | null => {
    const value = first(`dmi-${name}`);
    return value === null || /^(to be filled by o\.e\.m\.|default string|not specified|none)$/i.test(value) ? null : value;
  };
  return {
    cpus: whole(first('cpus')),
    cpuModel: first('cpu-model'),
    memoryBytes: memory ? Number(memory[1]) * 1024 : null,
    disks,
    nics,
    systemVendor: dmi('vendor'),
    systemProduct: dmi('product'),
    systemSerial: dmi('serial'),
  };
}

/** The sections of a script's output, each introduced by a marker line `@@name`: name → its lines. */
export function splitSections(output: string): Map<string, string> {
  const sections = new Map<string, string>();
  let current: string | null = null;
  let lines: string[] = [];
  for (const line of output.replace(/\r\n/g, '\n').split('\n')) {
    const marker = /^@@([a-z-]+)$/.exec(line);
    if (marker !== null) {
      if (current !== null) {
        sections.set(current, lines.join('\n'));
      }
      current = marker[1] ?? null;
      lines = [];
    } else if (current !== null) {
      lines.push(line);
    }
  }
  if (current !== null) {
    sections.set(current, lines.join('\n'));
  }
  return sections;
}

/**
 * Parses os-release(5): `KEY=value` lines, values optionally in double or
 * single quotes, backslash escapes inside double quotes, `#` comments.
 *
 * @see https://www.freedesktop.org/software/systemd/man/latest/os-release.html
 */
export function parseOsRelease(text: string): OsRelease {
  const values = new Map<string, string>();
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match === null) {
      continue;
    }
    values.set(match[1] ?? '', unquote(match[2] ?? ''));
  }
  const get = (key: string) => {
    const value = values.get(key);
    return value === undefined || value === '' ? null : value;
  };
  return {
    id: get('ID'),
    versionId: get('VERSION_ID'),
    prettyName: get('PRETTY_NAME'),
    idLike: (get('ID_LIKE') ?? '').split(/\s+/).filter((part) => part !== ''),
  };
}

function unquote(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    return trimmed.slice(1, -1).replace(/\\(["\\$`])/g, '$1');
  }
  if (trimmed.length >= 2 && trimmed.startsWith("'") && trimmed.endsWith("'")) {
    return trimmed.slice(1, -1);
  }
  return trimmed;
}

/**
 * Parses `df -Pk` output (header, then one line per file system:
 * name, 1024-blocks, used, available, capacity%, mount point). The name
 * and the mount point may contain spaces, so the numbers anchor the parse.
 */
export function parseDf(text: string): Pick<DiskSpace, 'mountPoint' | 'freeBytes' | 'totalBytes'> {
  const lines = text.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '');
  for (const line of lines.slice(1)) {
    const match = /^(.+?)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+|-)%?\s+(\/.*)$/.exec(line);
    if (match !== null) {
      return { totalBytes: Number(match[2]) * 1024, freeBytes: Number(match[4]) * 1024, mountPoint: match[6] ?? '/' };
    }
  }
  throw new Error(`cannot read df output "${lines.join(' | ').slice(0, 200)}"`);
}
