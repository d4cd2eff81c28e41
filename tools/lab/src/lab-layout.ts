import { join } from 'node:path';
import { labNetwork, type LabNetwork } from './lab-network';

/**
 * Names and folders of the labs on a machine. Each lab has a two-character
 * id; everything it creates on the machine carries `cclab<id>` (its bridge,
 * its hosts' network namespaces and veth ends, at most 12 characters, within
 * Linux's 15 for interfaces) or lives in its folder `<root>/<id>`, so its
 * leftovers can be found from its id alone, and no lab's names are a prefix
 * of another's.
 *
 * Labs of earlier versions of this code used `ccoslab0`, `ccoslab-h<N>` and
 * `/run/ccos-lab`; none of those names matches these, so neither version's
 * cleanup removes the other's labs.
 */
export const LAB_NAME_PREFIX = 'cclab';

/** The machine-side folder holding every lab's folder and the registry. */
export const LAB_ROOT = process.env['CCOS_LAB_STATE_DIR'] ?? '/run/cclab';

/** Which lab owns which slice: one file per lab (see lab-registry.ts). */
export const REGISTRY_DIR = join(LAB_ROOT, 'registry');

/**
 * Held, inside the lab lock, while the registry is read and changed. The lab
 * lock may be shared with a parent process; this one never is, so two
 * processes never pick a slice at once.
 */
export const REGISTRY_LOCK = join(LAB_ROOT, 'registry.lock');

/** Lab ids: a letter, then a letter or digit. */
export const LAB_ID_PATTERN = /^[a-z][a-z0-9]$/;

export const API_PORT = 6443;
export const MACHINE_CONFIG_PORT = 22623;

/** The PATH sshd (and so every session) starts with, as on a systemd host. */
export const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Where a host's stand-ins keep their state, inside the host. */
export const HOST_LAB_STATE_PATH = '/var/lib/ccos-lab';

/** Identity of host number `n` (1-based). */
export function hostId(n: number): string {
  return `h${n}`;
}

/** Everything one lab names on the machine. */
export interface LabLayout {
  readonly id: string;
  readonly network: LabNetwork;
  /** The lab's bridge: the gateway and the VIP live on it. */
  readonly bridge: string;
  /** What every network namespace and veth of the lab starts with (`cclab<id>-`). */
  readonly namePrefix: string;
  /** The `ip netns` name of a host. */
  netnsName(hostId: string): string;
  /** The machine-side end of a host's veth pair. */
  vethName(hostId: string): string;
  readonly paths: LabPaths;
}

/** Folders and files of one lab, all under its own folder. */
export interface LabPaths {
  readonly root: string;
  /** Persisted mount and UTS namespaces (a private bind mount of its own). */
  readonly namespaces: string;
  readonly hosts: string;
  readonly standins: string;
  readonly bin: string;
  readonly pki: string;
  readonly artifacts: string;
  readonly state: string;
  readonly daemonPid: string;
  readonly daemonLog: string;
  readonly vipFaults: string;
  readonly clientKey: string;
  readonly hostKubeconfig: string;
  host(id: string): string;
  mountNamespace(id: string): string;
  utsNamespace(id: string): string;
}

/** The layout of lab `id` on `subnet`. */
export function labLayout(id: string, subnet: string): LabLayout {
  if (!LAB_ID_PATTERN.test(id)) {
    throw new RangeError(`lab id ${JSON.stringify(id)} is not a letter followed by a letter or digit`);
  }
  const name = `${LAB_NAME_PREFIX}${id}`;
  const root = join(LAB_ROOT, id);
  return {
    id,
    network: labNetwork(subnet),
    bridge: name,
    namePrefix: `${name}-`,
    netnsName: (host) => `${name}-${host}`,
    vethName: (host) => `${name}-${host}`,
    paths: {
      root,
      namespaces: join(root, 'ns'),
      hosts: join(root, 'hosts'),
      standins: join(root, 'standins'),
      bin: join(root, 'bin'),
      pki: join(root, 'pki'),
      artifacts: join(root, 'artifacts'),
      state: join(root, 'state.json'),
      daemonPid: join(root, 'daemon.pid'),
      daemonLog: join(root, 'daemon.log'),
      vipFaults: join(root, 'vip-faults.json'),
      clientKey: join(root, 'id_ed25519'),
      hostKubeconfig: join(root, 'kubeconfig-vip'),
      host: (host) => join(root, 'hosts', host),
      mountNamespace: (host) => join(root, 'ns', `${host}.mnt`),
      utsNamespace: (host) => join(root, 'ns', `${host}.uts`),
    },
  };
}
