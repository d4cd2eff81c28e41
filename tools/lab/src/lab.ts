import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { ARTIFACTS_VERSION, writeArtifacts } from './artifacts';
import { createBootstrapToken, newBootstrapToken } from './bootstrap-token';
import { labFaults, findHost, type LabFaults } from './faults';
import { hostDirs } from './host-mounts';
import { prepareNamespaceFolder, runInHost } from './host-namespaces';
import { workerIgnitionConfig } from './ignition';
import { KubeClient } from './kube/kube-client';
import { kubeconfigYaml, parseKubeconfig, type KubeConnection } from './kube/kubeconfig';
import { cleanupLab, removeDeadLabs } from './lab-cleanup';
import { createHost, readMachineShadow, shadowedCommands, type LabHost } from './lab-host';
import { API_PORT, LAB_ROOT, MACHINE_CONFIG_PORT, REGISTRY_LOCK, hostId, labLayout, type LabLayout } from './lab-layout';
import { LAB_LOCK_PATH, LAB_LOCK_TIMEOUT_MS, acquireLabLock, type LabLockHolder } from './lab-lock';
import { MAX_HOSTS } from './lab-network';
import { ownerAlive, readEntry, readRegistry, registerLab, writeEntry, type LabRegistryEntry } from './lab-registry';
import { describeLab, readLabRecord, writeLabRecord, type LabDescription, type LabRecord } from './lab-state';
import { createBridge, createHostLinks } from './network';
import { hashPassword } from './password-hash';
import { createCertificateAuthority, issueServerCertificate, subjectAltNames } from './pki';
import { identityAlive, processIdentity } from './process-identity';
import { runCommand, type CommandResult, type RunOptions } from './run-command';
import { DEFAULT_HOST_KEY_TYPES, hostKeyFingerprints, type HostKeyType } from './sshd';
import { bundleScript, installHostCommands, writeExecutable } from './standin-bundle';
import type { HostLabConfig } from './standins/host-state';
import { processAlive } from './standins/process-state';
import { netemAvailable } from './traffic-control';
import { startVipServices, type VipServices, type VipServicesConfig } from './vip-services';

/** Options of {@link startLab}. */
export interface LabOptions {
  /** How many hosts (1..124; up to 28 share the machine with six other labs). */
  readonly hosts: number;
  /**
   * root's password on every host of the lab. Default: a random one per lab (in the lab's
   * description, `hosts[].password`), so a service or an agent of another lab that still knows
   * one of these addresses cannot log in.
   */
  readonly password?: string;
  /** Extra public keys (OpenSSH lines) root accepts; the lab's own key is always accepted. */
  readonly authorizedKeys?: readonly string[];
  /**
   * Admin kubeconfig (YAML text) of the kube-sim the kubelets join. The lab
   * forwards VIP:6443 to it, creates a bootstrap token in it, and the
   * Ignition config points kubelets at it through the VIP.
   */
  readonly kubeconfig?: string;
  /** Hostname of host N is `${hostnamePrefix}${N}` (default `h`, as the ids). */
  readonly hostnamePrefix?: string;
  readonly hostKeyTypes?: readonly HostKeyType[];
  /** Settings for the stand-in kubelets (tests shorten the CSR timeout). */
  readonly kubelet?: {
    readonly csrTimeoutSeconds?: number;
    readonly heartbeatSeconds?: number;
    readonly readyDelaySeconds?: number;
    /** `expirationSeconds` the kubelets ask for their serving certificates (kube-sim's minimum is 600). */
    readonly servingCertificateSeconds?: number;
  };
  /** Write the artifacts folder (default true). */
  readonly artifacts?: boolean;
  /** Run the VIP services in this process (default) or in a detached daemon (the CLI). */
  readonly vipServices?: 'in-process' | 'daemon';
  /** Where `up` writes lab.json (removed again by `down`). */
  readonly outFile?: string;
  /** What the lab is for (`demo`, a test), shown by `npm run lab -- status`. */
  readonly name?: string;
  /** How long to wait for the lab lock held by another start (default 10 minutes). */
  readonly lockTimeoutMs?: number;
  /** Progress messages. */
  readonly log?: (message: string) => void;
}

/** A running lab. */
export interface Lab extends LabDescription {
  /** The description as written to lab.json. */
  readonly description: LabDescription;
  readonly faults: LabFaults;
  /** Runs a command inside a host's namespaces as root (no SSH), e.g. to inspect its files. */
  exec(host: string, argv: readonly string[], options?: RunOptions): Promise<CommandResult>;
  /** Current host key fingerprints of a host. */
  hostKeyFingerprint(host: string): Promise<Partial<Record<HostKeyType, string>>>;
  /** Tears this lab down (also what `lab down` does); other labs stay as they are. */
  stop(): Promise<void>;
}

/** One lab of the registry, as `lab status` lists it. */
export interface LabSummary {
  readonly id: string;
  readonly name?: string;
  readonly subnet: string;
  readonly owner: { readonly pid: number; readonly command: string; readonly alive: boolean };
  readonly createdAt: string;
  /** Null while the lab is being built (or when its build died half way). */
  readonly description: LabDescription | null;
}

/** Thrown when the lab is started without root. */
export class LabPermissionError extends Error {
  constructor() {
    super('the lab needs root: it creates network namespaces, a bridge, mounts and runs sshd. Run it as root (e.g. `sudo npm run lab -- up --hosts 3`).');
    this.name = 'LabPermissionError';
  }
}

/** Throws {@link LabPermissionError} unless running as root. */
export function requireRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new LabPermissionError();
  }
}

const DAEMON_ENTRY = fileURLToPath(new URL('./lab-daemon.ts', import.meta.url));

/** How to stop the VIP services of the labs this process runs in-process, by lab id. */
const inProcessServices = new Map<string, () => Promise<void>>();

/**
 * Brings up a lab next to any others on the machine. Holding the lab lock,
 * it removes the leftovers of labs whose owner is gone and registers a new
 * lab with its own id and slice of 198.18.0.0/24; then, without the lock, it
 * creates the lab's bridge with gateway and VIP, N hosts (network + mount +
 * UTS namespaces, private filesystem views, stand-ins on PATH, real sshd
 * with password and key login), the artifacts, the machine config server
 * and the API forward on the VIP, and a bootstrap token in kube-sim.
 */
export async function startLab(options: LabOptions): Promise<Lab> {
  requireRoot();
  const log = options.log ?? (() => undefined);
  if (!Number.isInteger(options.hosts) || options.hosts < 1 || options.hosts > MAX_HOSTS) {
    throw new RangeError(`hosts must be 1..${MAX_HOSTS}, got ${options.hosts}`);
  }
  await ensureTools(log);
  const entry = await underLabLock(log, options.lockTimeoutMs, async () => {
    const dead = await removeDeadLabs(log);
    return registerLab(options.hosts, processIdentity(), options.name, dead.map((entry) => entry.id));
  });
  const layout = labLayout(entry.id, entry.subnet);
  log(`lab ${layout.id}: ${layout.network.subnet} (gateway ${layout.network.gateway}, VIP ${layout.network.vip}), names ${layout.bridge}*, folder ${layout.paths.root}`);
  const vip: { services: VipServices | null } = { services: null };
  try {
    await mkdir(layout.paths.root, { recursive: true, mode: 0o700 });
    await prepareNamespaceFolder(layout);
    const record = await build(layout, entry, options, log, (services) => {
      vip.services = services;
    });
    const stopServices = async () => {
      inProcessServices.delete(layout.id);
      await vip.services?.stop();
    };
    if (vip.services !== null) {
      inProcessServices.set(layout.id, stopServices);
    }
    return attach(layout, record, stopServices, async () => {
      await vip.services?.refresh();
    });
  } catch (error) {
    await vip.services?.stop().catch(() => undefined);
    await cleanupLab(layout).catch(() => undefined);
    throw error;
  }
}

/**
 * A handle on a lab that is up, e.g. for the CLI's fault commands: the lab
 * `id`, or without one the only lab on the machine. Null when there is no
 * such lab (or it is still being built).
 */
export async function attachLab(id?: string): Promise<Lab | null> {
  const entry = id === undefined ? await onlyLab() : await readEntry(id);
  if (entry === null) {
    return null;
  }
  const layout = labLayout(entry.id, entry.subnet);
  const record = await readLabRecord(layout);
  if (record === null) {
    return null;
  }
  return attach(layout, record, async () => undefined, async () => undefined);
}

/**
 * Removes labs, never one whose owner is another process that still runs
 * (except a CLI lab, whose owner is its daemon). With an id: that lab
 * (`lab down`). Without: the labs this process started and the leftovers
 * of labs whose owner is gone. Returns the ids removed.
 */
export async function stopLab(id?: string, log: (message: string) => void = () => undefined): Promise<string[]> {
  requireRoot();
  if (id !== undefined) {
    const entry = await readEntry(id);
    if (entry === null) {
      return [];
    }
    if (ownerAlive(entry) && !ownedHere(entry) && !isDaemonOf(entry)) {
      throw new Error(`lab ${id} belongs to pid ${entry.owner.pid} (${entry.owner.command}), which still runs: stop it there, or end that process (the next lab start then removes what it leaves)`);
    }
    await removeLab(entry, log);
    return [id];
  }
  const removed: string[] = [];
  for (const entry of (await readRegistry()).filter(ownedHere)) {
    await removeLab(entry, log);
    removed.push(entry.id);
  }
  const dead = await underLabLock(log, undefined, () => removeDeadLabs(log));
  return [...removed, ...dead.map((entry) => entry.id)];
}

/** Every lab in the registry, with its owner and (once built) its description. */
export async function listLabs(): Promise<LabSummary[]> {
  return Promise.all((await readRegistry()).map(async (entry) => {
    const record = await readLabRecord(labLayout(entry.id, entry.subnet));
    return {
      id: entry.id,
      ...(entry.name === undefined ? {} : { name: entry.name }),
      subnet: entry.subnet,
      owner: { pid: entry.owner.pid, command: entry.owner.command, alive: ownerAlive(entry) },
      createdAt: entry.createdAt,
      description: record === null ? null : describeLab(record),
    };
  }));
}

/**
 * Stops a lab's in-process services (when this process runs them) and
 * removes everything of it. The owner removes its own lab without the lab
 * lock: while it runs nobody else touches the lab, and its slice is free
 * only once the entry is gone, after everything else. Anyone else holds the
 * lock, so a start cleaning dead labs does not clean the same one at once.
 */
async function removeLab(entry: LabRegistryEntry, log: (message: string) => void): Promise<void> {
  const layout = labLayout(entry.id, entry.subnet);
  await inProcessServices.get(entry.id)?.();
  if (ownedHere(entry)) {
    await cleanupLab(layout);
    return;
  }
  await underLabLock(log, undefined, () => cleanupLab(layout));
}

/** Whether this process owns the lab (not just an earlier process with the same pid). */
function ownedHere(entry: LabRegistryEntry): boolean {
  return entry.owner.pid === process.pid && identityAlive(entry.owner);
}

/** Whether the entry's owner is the lab's own daemon (a lab `up` started). */
function isDaemonOf(entry: LabRegistryEntry): boolean {
  return entry.owner.command.includes(`${labLayout(entry.id, entry.subnet).paths.root}/`);
}

async function onlyLab(): Promise<LabRegistryEntry | null> {
  const registry = await readRegistry();
  if (registry.length <= 1) {
    return registry[0] ?? null;
  }
  throw new Error(`${registry.length} labs are up (${registry.map((entry) => `${entry.id}${entry.name === undefined ? '' : ` ${entry.name}`}`).join(', ')}): say which one`);
}

/** Runs `action` holding the lab lock and, inside it, the registry lock. */
async function underLabLock<T>(log: (message: string) => void, timeoutMs: number | undefined, action: () => Promise<T>): Promise<T> {
  const onWait = (what: string) => (holder: LabLockHolder) => log(`waiting for the ${what}, held by pid ${holder.pid} (${holder.command}) since ${holder.since}`);
  const release = await acquireLabLock({ timeoutMs: timeoutMs ?? LAB_LOCK_TIMEOUT_MS, onWait: onWait(`lab lock ${LAB_LOCK_PATH}`) });
  try {
    await mkdir(LAB_ROOT, { recursive: true, mode: 0o755 });
    const releaseRegistry = await acquireLabLock({ path: REGISTRY_LOCK, inheritable: false, onWait: onWait('lab registry') });
    try {
      return await action();
    } finally {
      await releaseRegistry();
    }
  } finally {
    await release();
  }
}

function attach(layout: LabLayout, record: LabRecord, stopServices: () => Promise<void>, refreshVip: () => Promise<void>): Lab {
  const description = describeLab(record);
  return {
    ...description,
    description,
    faults: labFaults(layout, record.hosts, record.hostKeyTypes, refreshVip),
    exec: (host, argv, runOptions) => runInHost(layout, findHost(record.hosts, host).id, argv, runOptions),
    hostKeyFingerprint: (host) => hostKeyFingerprints(hostDirs(layout.paths.host(findHost(record.hosts, host).id)).ssh, record.hostKeyTypes),
    stop: async () => {
      await stopServices();
      const entry = await readEntry(layout.id);
      if (entry !== null) {
        await removeLab(entry, () => undefined);
      }
    },
  };
}

async function ensureTools(log: (message: string) => void): Promise<void> {
  if (!existsSync('/usr/sbin/sshd')) {
    log('installing openssh-server');
    await runCommand(['apt-get', 'install', '-y', 'openssh-server'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeoutMs: 300_000,
    });
  }
  for (const tool of ['ip', 'nsenter', 'unshare', 'ssh-keygen', 'openssl', 'mount', 'tc']) {
    const found = await runCommand(['sh', '-c', 'command -v "$1"', 'sh', tool], { allowFailure: true });
    if (found.code !== 0) {
      throw new Error(`the lab needs \`${tool}\` on this machine`);
    }
  }
}

async function build(
  layout: LabLayout,
  entry: LabRegistryEntry,
  options: LabOptions,
  log: (message: string) => void,
  onVip: (services: VipServices) => void,
): Promise<LabRecord> {
  const started = Date.now();
  const { paths, network } = layout;
  const hostKeyTypes = options.hostKeyTypes ?? DEFAULT_HOST_KEY_TYPES;
  const prefix = options.hostnamePrefix ?? 'h';
  const password = options.password ?? randomBytes(12).toString('base64url');
  const hosts: LabHost[] = Array.from({ length: options.hosts }, (_, index) => {
    const id = hostId(index + 1);
    return { id, hostname: `${prefix}${index + 1}`, ip: network.hostIp(index + 1), port: 22, user: 'root', password, netns: layout.netnsName(id) };
  });

  log('building stand-ins, keys and certificates');
  const [, publicKey, passwordHash, machineShadow, mcsTls, cluster] = await Promise.all([
    installHostCommands(paths.standins),
    clientKey(layout),
    hashPassword(password),
    readMachineShadow(),
    machineConfigCertificate(layout),
    options.kubeconfig === undefined ? null : clusterAccess(options.kubeconfig, network.vip),
  ]);
  const artifactsWritten = options.artifacts === false ? Promise.resolve() : writeArtifacts(paths.artifacts);

  log(`creating the bridge ${layout.bridge} and the host links`);
  await createBridge(layout);
  await createHostLinks(layout, hosts);

  log(`creating ${hosts.length} hosts (${hosts[0]?.ip ?? ''}${hosts.length > 1 ? ` to ${hosts.at(-1)?.ip ?? ''}` : ''})`);
  const shadowed = await shadowedCommands(paths.standins);
  const labConfig: HostLabConfig = {
    ...(options.kubelet?.csrTimeoutSeconds === undefined ? {} : { kubeletCsrTimeoutSeconds: options.kubelet.csrTimeoutSeconds }),
    ...(options.kubelet?.heartbeatSeconds === undefined ? {} : { kubeletHeartbeatSeconds: options.kubelet.heartbeatSeconds }),
    ...(options.kubelet?.readyDelaySeconds === undefined ? {} : { kubeletReadyDelaySeconds: options.kubelet.readyDelaySeconds }),
    ...(options.kubelet?.servingCertificateSeconds === undefined ? {} : { kubeletServingCertificateSeconds: options.kubelet.servingCertificateSeconds }),
    ntpServer: network.gateway,
  };
  await inBatches(hosts, 8, (host) => createHost({
    layout,
    host,
    dirs: hostDirs(paths.host(host.id)),
    passwordHash,
    authorizedKeys: [publicKey, ...(options.authorizedKeys ?? [])],
    hostKeyTypes,
    labConfig,
    standinsDir: paths.standins,
    shadowed,
  }, machineShadow));

  const token = newBootstrapToken();
  if (cluster !== null) {
    log('creating the bootstrap token in kube-sim');
    await createBootstrapToken(cluster.client, token);
    cluster.client.close();
  }
  const workerConfig = workerIgnitionConfig({
    vip: network.vip,
    clusterCaPem: cluster?.connection.caPem,
    tlsServerName: cluster?.tlsServerName,
    bootstrapToken: token.token,
    sshAuthorizedKeys: [publicKey],
  });
  const vipConfig: VipServicesConfig = {
    vip: network.vip,
    machineConfigTls: mcsTls,
    workerConfig,
    ...(cluster === null ? {} : { apiTarget: cluster.apiTarget }),
    faultsFile: paths.vipFaults,
  };
  log(`starting the machine config server (${network.vip}:${MACHINE_CONFIG_PORT})${cluster === null ? '' : ` and the API forward (${network.vip}:${API_PORT} to ${cluster.apiTarget.host}:${cluster.apiTarget.port})`}`);
  if (options.vipServices === 'daemon') {
    const daemon = await startDaemon(layout, vipConfig);
    // The daemon holds the lab from now on: the lab lives as long as it does.
    await writeEntry({ ...entry, owner: processIdentity(daemon) });
  } else {
    onVip(await startVipServices(vipConfig));
  }
  if (cluster !== null) {
    await writeFile(paths.hostKubeconfig, kubeconfigYaml({
      server: `https://${network.vip}:${API_PORT}`,
      caPem: cluster.connection.caPem,
      tlsServerName: cluster.tlsServerName,
      user: cluster.connection.token !== undefined
        ? { token: cluster.connection.token }
        : { clientCertPem: cluster.connection.clientCertPem ?? '', clientKeyPem: cluster.connection.clientKeyPem ?? '' },
      userName: 'admin',
    }), { mode: 0o600 });
  }
  await artifactsWritten;
  const fingerprints = Object.fromEntries(await Promise.all(hosts.map(async (host) =>
    [host.id, await hostKeyFingerprints(hostDirs(paths.host(host.id)).ssh, hostKeyTypes)] as const)));
  const record: LabRecord = {
    id: layout.id,
    ...(options.name === undefined ? {} : { name: options.name }),
    bridge: layout.bridge,
    namePrefix: layout.namePrefix,
    gateway: network.gateway,
    vip: network.vip,
    subnet: network.subnet,
    hosts,
    unassignedIps: unassignedIps(layout, hosts.length),
    machineConfigServer: `https://${network.vip}:${MACHINE_CONFIG_PORT}`,
    machineConfigCaCert: mcsTls.caPem,
    ...(cluster === null ? {} : { apiServer: `https://${network.vip}:${API_PORT}`, vipKubeconfig: paths.hostKubeconfig }),
    bootstrapToken: token.token,
    artifactsDir: paths.artifacts,
    artifactsVersion: ARTIFACTS_VERSION,
    privateKeyPath: paths.clientKey,
    publicKey,
    hostKeyTypes,
    hostKeyFingerprints: fingerprints,
    stateDir: paths.root,
    netem: await netemAvailable(layout),
    createdAt: new Date().toISOString(),
    ...(options.outFile === undefined ? {} : { outFile: options.outFile }),
    vipServices: options.vipServices ?? 'in-process',
  };
  await writeLabRecord(layout, record);
  if (options.outFile !== undefined) {
    await writeFile(options.outFile, `${JSON.stringify(describeLab(record), null, 2)}\n`, { mode: 0o600 });
  }
  log(`lab ${layout.id} up: ${hosts.length} hosts in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return record;
}

/** The last few addresses of the lab's slice, which no host has. */
function unassignedIps(layout: LabLayout, hosts: number): string[] {
  const { capacity } = layout.network;
  const first = Math.max(hosts + 1, capacity - 3);
  return Array.from({ length: capacity - first + 1 }, (_, index) => layout.network.hostIp(first + index));
}

async function clientKey(layout: LabLayout): Promise<string> {
  const file = layout.paths.clientKey;
  await runCommand(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', `ccos-lab-${layout.id}`, '-f', file]);
  return (await readFile(`${file}.pub`, 'utf8')).trim();
}

async function machineConfigCertificate(layout: LabLayout): Promise<{ certPem: string; keyPem: string; caPem: string }> {
  const ca = await createCertificateAuthority('machine-config-server-ca');
  const server = await issueServerCertificate(ca, { commonName: 'machine-config-server', dnsNames: ['api-int.lab.ccos.local'], ips: [layout.network.vip] });
  await mkdir(layout.paths.pki, { recursive: true, mode: 0o700 });
  await writeFile(`${layout.paths.pki}/machine-config-ca.crt`, ca.certPem);
  return { certPem: `${server.certPem.trim()}\n${ca.certPem.trim()}\n`, keyPem: server.keyPem, caPem: ca.certPem };
}

interface ClusterAccess {
  readonly connection: KubeConnection;
  readonly client: KubeClient;
  readonly apiTarget: { readonly host: string; readonly port: number };
  /** Set when kube-sim's certificate does not name the VIP. */
  readonly tlsServerName?: string;
}

async function clusterAccess(kubeconfig: string, vip: string): Promise<ClusterAccess> {
  const connection = parseKubeconfig(kubeconfig);
  const url = new URL(connection.server);
  if (url.protocol !== 'https:') {
    throw new Error(`kube-sim must serve HTTPS for the kubelets' TLS bootstrap (kubeconfig server is ${connection.server})`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const sans = await serverCertificateNames(host, port, connection.caPem);
  const tlsServerName = sans.ips.includes(vip) ? undefined : sans.dns[0] ?? sans.ips[0];
  return { connection, client: new KubeClient(connection), apiTarget: { host, port }, tlsServerName };
}

/** The names in the API server's certificate (to decide whether kubelets need tls-server-name). */
function serverCertificateNames(host: string, port: number, caPem: string | undefined): Promise<{ dns: string[]; ips: string[] }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host, port, ca: caPem, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      const pem = `-----BEGIN CERTIFICATE-----\n${cert.raw.toString('base64')}\n-----END CERTIFICATE-----\n`;
      resolve(subjectAltNames(pem));
    });
    socket.on('error', (error) => reject(new Error(`cannot reach kube-sim at ${host}:${port}: ${error.message}`, { cause: error })));
  });
}

/** Starts the lab's daemon; returns its pid once it serves the VIP. */
async function startDaemon(layout: LabLayout, config: VipServicesConfig): Promise<number> {
  const { paths } = layout;
  const script = `${paths.bin}/lab-daemon.cjs`;
  const configFile = `${paths.root}/vip-services.json`;
  await mkdir(paths.bin, { recursive: true });
  await writeExecutable(script, await bundleScript(DAEMON_ENTRY));
  await writeFile(configFile, JSON.stringify(config), { mode: 0o600 });
  const logFd = openSync(paths.daemonLog, 'a');
  const child = spawn(process.execPath, [script, configFile, paths.daemonPid], { detached: true, stdio: ['ignore', logFd, logFd], cwd: '/' });
  child.unref();
  closeSync(logFd);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const pid = Number.parseInt(await readFile(paths.daemonPid, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0) {
      return pid;
    }
    if (child.pid === undefined || !processAlive(child.pid)) {
      break;
    }
    await sleep(25);
  }
  const output = await readFile(paths.daemonLog, 'utf8').catch(() => '');
  throw new Error(`the lab daemon did not start: ${output.trim().split('\n').slice(-5).join('\n')}`);
}

async function inBatches<T>(items: readonly T[], size: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await action(item);
    }
  });
  await Promise.all(workers);
}
