import { readFile, writeFile } from 'node:fs/promises';
import type { LabHost } from './lab-host';
import type { LabLayout } from './lab-layout';
import type { HostKeyType } from './sshd';

/**
 * What `lab.json` holds: which lab this is, how to reach the hosts and the
 * cluster endpoints behind the VIP.
 */
export interface LabDescription {
  /** The lab's id: its names on the machine start with `cclab<id>`. */
  readonly id: string;
  /** What the lab is for (LabOptions.name), shown by `lab status`. */
  readonly name?: string;
  /** The lab's bridge (holds the gateway and the VIP). */
  readonly bridge: string;
  /** What the lab's network namespaces and veth ends are called (`cclab<id>-h1`, ...). */
  readonly namePrefix: string;
  /** The machine as the hosts see it (installer service, kube-sim forward). */
  readonly gateway: string;
  /** The cluster VIP: machine config server on 22623, API forward on 6443. */
  readonly vip: string;
  /** The lab's slice of 198.18.0.0/24, e.g. `198.18.0.64/27`. */
  readonly subnet: string;
  readonly hosts: readonly LabHost[];
  /**
   * Addresses on the lab's network that no host has: nothing answers there
   * (for tests of an unreachable host), and no other lab uses them.
   */
  readonly unassignedIps: readonly string[];
  /** `https://<vip>:22623`; the worker config is at `/config/worker`. */
  readonly machineConfigServer: string;
  /** PEM of the CA that signed the machine config server's certificate. */
  readonly machineConfigCaCert: string;
  /** `https://<vip>:6443` when a kube-sim was given. */
  readonly apiServer?: string;
  /** The bootstrap token (`<id>.<secret>`) in the Ignition config's kubeconfig. */
  readonly bootstrapToken: string;
  /** Admin kubeconfig of the kube-sim, rewritten to the VIP (reachable from hosts). */
  readonly vipKubeconfig?: string;
  /** The artifacts the installer service serves (`<dir>/<kind>/<name>`). */
  readonly artifactsDir: string;
  readonly artifactsVersion: string;
  /** A private key every host accepts for root (OpenSSH format). */
  readonly privateKeyPath: string;
  readonly publicKey: string;
  readonly hostKeyTypes: readonly HostKeyType[];
  /** Host key fingerprints at bring-up (`SHA256:...`), by host id and key type. */
  readonly hostKeyFingerprints: Readonly<Record<string, Partial<Record<HostKeyType, string>>>>;
  readonly stateDir: string;
  /** Whether `latency` (tc netem) works on this kernel. */
  readonly netem: boolean;
}

/** The lab's private record in the state folder: the description plus what `down` and `fault` need. */
export interface LabRecord extends LabDescription {
  readonly createdAt: string;
  /** Where `up` wrote lab.json (removed by `down`). */
  readonly outFile?: string;
  /** Who runs the VIP services. */
  readonly vipServices: 'daemon' | 'in-process';
}

/** Writes the lab's record. */
export async function writeLabRecord(layout: LabLayout, record: LabRecord): Promise<void> {
  await writeFile(layout.paths.state, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/** Reads the lab's record, or null when it is not (fully) up. */
export async function readLabRecord(layout: LabLayout): Promise<LabRecord | null> {
  try {
    return JSON.parse(await readFile(layout.paths.state, 'utf8')) as LabRecord;
  } catch {
    return null;
  }
}

/** The public part of a record (what lab.json holds). */
export function describeLab(record: LabRecord): LabDescription {
  const { createdAt: _created, outFile: _out, vipServices: _vip, ...description } = record;
  return description;
}
