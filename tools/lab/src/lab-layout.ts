import { join } from 'node:path';

/**
 * Names and addresses the lab owns on the machine. Everything it creates
 * carries the `ccoslab` prefix or lives in {@link LAB_STATE_DIR}, so cleanup
 * can find leftovers of a crashed run without any other record.
 */
export const LAB_PREFIX = 'ccoslab';

/** The machine-side folder holding every host's files, keys, logs and the lab's own state. */
export const LAB_STATE_DIR = process.env['CCOS_LAB_STATE_DIR'] ?? '/run/ccos-lab';

/** The bridge joining all hosts; it carries the gateway address and the VIP. */
export const BRIDGE_NAME = `${LAB_PREFIX}0`;

/** The test range. Nothing outside it is ever addressed. */
export const SUBNET = '198.18.0.0/24';
export const SUBNET_PREFIX_LENGTH = 24;
/** The machine as the hosts see it: installer service, kube-sim forward. */
export const GATEWAY_IP = '198.18.0.1';
/** The cluster VIP: machine config server (22623) and the API forward (6443). */
export const VIP = '198.18.0.2';
/** Host N gets 198.18.0.(10+N). */
export const FIRST_HOST_OCTET = 11;
export const MAX_HOSTS = 240;

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

/** The address of host number `n` (1-based). */
export function hostIp(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > MAX_HOSTS) {
    throw new RangeError(`host number ${n} is outside 1..${MAX_HOSTS}`);
  }
  return `198.18.0.${FIRST_HOST_OCTET + n - 1}`;
}

/** The network namespace of a host (`ip netns` name). */
export function netnsName(id: string): string {
  return `${LAB_PREFIX}-${id}`;
}

/** The machine-side end of a host's veth pair (at most 15 characters). */
export function vethName(id: string): string {
  return `${LAB_PREFIX}-${id}`;
}

/** Paths inside {@link LAB_STATE_DIR}. */
export const statePaths = {
  root: LAB_STATE_DIR,
  /** Persisted mount and UTS namespaces (a private bind mount of its own). */
  namespaces: join(LAB_STATE_DIR, 'ns'),
  hosts: join(LAB_STATE_DIR, 'hosts'),
  standins: join(LAB_STATE_DIR, 'standins'),
  bin: join(LAB_STATE_DIR, 'bin'),
  pki: join(LAB_STATE_DIR, 'pki'),
  artifacts: join(LAB_STATE_DIR, 'artifacts'),
  state: join(LAB_STATE_DIR, 'state.json'),
  daemonPid: join(LAB_STATE_DIR, 'daemon.pid'),
  daemonLog: join(LAB_STATE_DIR, 'daemon.log'),
  vipFaults: join(LAB_STATE_DIR, 'vip-faults.json'),
  clientKey: join(LAB_STATE_DIR, 'id_ed25519'),
  hostKubeconfig: join(LAB_STATE_DIR, 'kubeconfig-vip'),
  host: (id: string) => join(LAB_STATE_DIR, 'hosts', id),
  mountNamespace: (id: string) => join(LAB_STATE_DIR, 'ns', `${id}.mnt`),
  utsNamespace: (id: string) => join(LAB_STATE_DIR, 'ns', `${id}.uts`),
} as const;
