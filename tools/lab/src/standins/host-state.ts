import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * State the stand-ins keep on a host, and the switches the lab flips from
 * the machine. Both sides import this module, so the file names and shapes
 * are defined once.
 *
 * `CCOS_LAB_HOST_ROOT` prefixes every absolute path a stand-in touches; it is
 * unset on lab hosts and lets specs run stand-in code against a temp folder.
 */
export const HOST_ROOT = process.env['CCOS_LAB_HOST_ROOT'] ?? '';

/** Where stand-in state lives, as seen inside the host. */
export const STANDIN_STATE_DIR = '/var/lib/ccos-lab';

/** A path on the host, with the test root prefix applied. */
export function onHost(path: string): string {
  return HOST_ROOT === '' ? path : join(HOST_ROOT, path);
}

/** Switches the lab sets per host to make a preflight check fail. */
export interface HostFaults {
  /** `swapon --show` lists an active swap partition. */
  readonly swap?: boolean;
  /** `timedatectl` reports the clock as not synchronised. */
  readonly timeUnsynchronised?: boolean;
  /**
   * Seconds the host's clock has jumped ahead (what the stand-in kubelet's certificate manager
   * reads), so a test ages a host's certificates in a moment instead of waiting for minutes.
   */
  readonly clockOffsetSeconds?: number;
}

/** Settings the lab gives the stand-ins of a host. */
export interface HostLabConfig {
  /** Seconds the stand-in kubelet waits for a CSR before it makes a new one (real kubelet: 900). */
  readonly kubeletCsrTimeoutSeconds?: number;
  /** Seconds between the stand-in kubelet's node status updates and lease renewals. */
  readonly kubeletHeartbeatSeconds?: number;
  /** Seconds the Node stays NotReady (network plugin not ready) after registering. */
  readonly kubeletReadyDelaySeconds?: number;
  /** `spec.expirationSeconds` of the stand-in kubelet's serving CSRs (unset: the signer's default). */
  readonly kubeletServingCertificateSeconds?: number;
  /** Seconds a rebooting host stays down (sshd and every unit stopped) before it boots again; 2 when unset. */
  readonly rebootSeconds?: number;
  /** The time server `timedatectl timesync-status` names: the lab's gateway. */
  readonly ntpServer?: string;
}

/** File names inside {@link STANDIN_STATE_DIR}. */
export const STANDIN_FILES = {
  faults: 'faults.json',
  config: 'config.json',
  rpmdb: 'rpmdb.json',
  sysctl: 'sysctl.json',
  systemd: 'systemd',
  journal: 'journal',
  /** The host's boot id, shown as `/proc/sys/kernel/random/boot_id` (a bind mount): a reboot writes a new one in place. */
  bootId: 'boot_id',
} as const;

/** Where the kernel shows the boot id; on a lab host a bind mount of {@link STANDIN_FILES.bootId}. */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

/** A path inside the stand-in state folder of the current host. */
export function statePath(...parts: string[]): string {
  return onHost(join(STANDIN_STATE_DIR, ...parts));
}

/** Reads a JSON file, or returns `fallback` when it is missing or unreadable. */
export function readJson<T>(path: string, fallback: T): T {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return fallback;
  }
}

/** Writes a JSON file atomically (readers never see half a file). */
export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temp, path);
}

/** The host's current faults. */
export function readFaults(): HostFaults {
  return readJson<HostFaults>(statePath(STANDIN_FILES.faults), {});
}

/** Changes some of the host's faults (from the host, e.g. `swapoff -a`). */
export function updateFaults(change: HostFaults): void {
  writeJson(statePath(STANDIN_FILES.faults), { ...readFaults(), ...change });
}

/** The lab's settings for this host. */
export function readLabConfig(): HostLabConfig {
  return readJson<HostLabConfig>(statePath(STANDIN_FILES.config), {});
}

/** The host's clock: the machine's plus the jumps the lab made ({@link HostFaults.clockOffsetSeconds}). */
export function hostNow(): number {
  return Date.now() + (readFaults().clockOffsetSeconds ?? 0) * 1000;
}
