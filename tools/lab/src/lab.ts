import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ARTIFACTS_VERSION, writeArtifacts } from './artifacts';
import { createBootstrapToken, newBootstrapToken } from './bootstrap-token';
import { labFaults, findHost, type LabFaults } from './faults';
import { prepareNamespaceFolder, runInHost } from './host-namespaces';
import { hostDirs } from './host-mounts';
import { workerIgnitionConfig } from './ignition';
import { KubeClient } from './kube/kube-client';
import { kubeconfigYaml, parseKubeconfig, type KubeConnection } from './kube/kubeconfig';
import { cleanupLab } from './lab-cleanup';
import { createHost, readMachineShadow, shadowedCommands, type LabHost } from './lab-host';
import {
  API_PORT,
  GATEWAY_IP,
  MACHINE_CONFIG_PORT,
  MAX_HOSTS,
  SUBNET,
  VIP,
  hostId,
  hostIp,
  netnsName,
  statePaths,
} from './lab-layout';
import { describeLab, writeLabRecord, type LabDescription, type LabRecord } from './lab-state';
import { createBridge, createHostLinks } from './network';
import { hashPassword } from './password-hash';
import { createCertificateAuthority, issueServerCertificate, subjectAltNames } from './pki';
import { processAlive } from './standins/process-state';
import { bundleScript, installHostCommands, writeExecutable } from './standin-bundle';
import type { HostLabConfig } from './standins/host-state';
import { runCommand, type CommandResult, type RunOptions } from './run-command';
import { DEFAULT_HOST_KEY_TYPES, hostKeyFingerprints, type HostKeyType } from './sshd';
import { netemAvailable } from './traffic-control';
import { startVipServices, type VipServices, type VipServicesConfig } from './vip-services';

/** Options of {@link startLab}. */
export interface LabOptions {
  /** How many hosts (1..240). */
  readonly hosts: number;
  /** root's password on every host (default `ccoslab`). */
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
  };
  /** Write the artifacts folder (default true). */
  readonly artifacts?: boolean;
  /** Run the VIP services in this process (default) or in a detached daemon (the CLI). */
  readonly vipServices?: 'in-process' | 'daemon';
  /** Where `up` writes lab.json (removed again by `down`). */
  readonly outFile?: string;
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
  /** Tears everything down (also what `lab down` does). */
  stop(): Promise<void>;
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

/**
 * Brings up a lab: cleans up any earlier one, then creates the bridge with
 * gateway and VIP, N hosts (network + mount + UTS namespaces, private
 * filesystem views, stand-ins on PATH, real sshd with password and key
 * login), the artifacts, the machine config server and the API forward on
 * the VIP, and a bootstrap token in kube-sim.
 */
export async function startLab(options: LabOptions): Promise<Lab> {
  requireRoot();
  const log = options.log ?? (() => undefined);
  if (!Number.isInteger(options.hosts) || options.hosts < 1 || options.hosts > MAX_HOSTS) {
    throw new RangeError(`hosts must be 1..${MAX_HOSTS}, got ${options.hosts}`);
  }
  await cleanupLab();
  await ensureTools(log);
  const vip: { services: VipServices | null } = { services: null };
  try {
    await mkdir(statePaths.root, { recursive: true, mode: 0o700 });
    await prepareNamespaceFolder();
    const record = await build(options, log, (services) => {
      vip.services = services;
    });
    return attach(record, async () => {
      await vip.services?.stop();
    }, async () => {
      await vip.services?.refresh();
    });
  } catch (error) {
    await vip.services?.stop().catch(() => undefined);
    await cleanupLab().catch(() => undefined);
    throw error;
  }
}

/** A handle on the lab that is up (from its state folder), e.g. for the CLI's fault commands. */
export async function attachLab(): Promise<Lab | null> {
  const text = await readFile(statePaths.state, 'utf8').catch(() => null);
  if (text === null) {
    return null;
  }
  return attach(JSON.parse(text) as LabRecord, async () => undefined, async () => undefined);
}

/** Tears down whatever lab is up (or left over). */
export async function stopLab(): Promise<void> {
  requireRoot();
  await cleanupLab();
}

function attach(record: LabRecord, stopServices: () => Promise<void>, refreshVip: () => Promise<void>): Lab {
  const description = describeLab(record);
  return {
    ...description,
    description,
    faults: labFaults(record.hosts, record.hostKeyTypes, refreshVip),
    exec: (host, argv, runOptions) => runInHost(findHost(record.hosts, host).id, argv, runOptions),
    hostKeyFingerprint: (host) => hostKeyFingerprints(hostDirs(statePaths.host(findHost(record.hosts, host).id)).ssh, record.hostKeyTypes),
    stop: async () => {
      await stopServices();
      await cleanupLab();
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

async function build(options: LabOptions, log: (message: string) => void, onVip: (services: VipServices) => void): Promise<LabRecord> {
  const started = Date.now();
  const hostKeyTypes = options.hostKeyTypes ?? DEFAULT_HOST_KEY_TYPES;
  const password = options.password ?? 'ccoslab';
  const prefix = options.hostnamePrefix ?? 'h';
  const hosts: LabHost[] = Array.from({ length: options.hosts }, (_, index) => {
    const id = hostId(index + 1);
    return { id, hostname: `${prefix}${index + 1}`, ip: hostIp(index + 1), port: 22, user: 'root', password, netns: netnsName(id) };
  });

  log('building stand-ins, keys and certificates');
  const [, publicKey, passwordHash, machineShadow, mcsTls, cluster] = await Promise.all([
    installHostCommands(statePaths.standins),
    clientKey(),
    hashPassword(password),
    readMachineShadow(),
    machineConfigCertificate(),
    options.kubeconfig === undefined ? null : clusterAccess(options.kubeconfig),
  ]);
  const artifactsWritten = options.artifacts === false ? Promise.resolve() : writeArtifacts(statePaths.artifacts);

  log('creating the bridge and host links');
  await createBridge();
  await createHostLinks(hosts);

  log(`creating ${hosts.length} hosts`);
  const shadowed = await shadowedCommands(statePaths.standins);
  const labConfig: HostLabConfig = {
    ...(options.kubelet?.csrTimeoutSeconds === undefined ? {} : { kubeletCsrTimeoutSeconds: options.kubelet.csrTimeoutSeconds }),
    ...(options.kubelet?.heartbeatSeconds === undefined ? {} : { kubeletHeartbeatSeconds: options.kubelet.heartbeatSeconds }),
    ...(options.kubelet?.readyDelaySeconds === undefined ? {} : { kubeletReadyDelaySeconds: options.kubelet.readyDelaySeconds }),
  };
  await inBatches(hosts, 8, (host) => createHost({
    host,
    dirs: hostDirs(statePaths.host(host.id)),
    passwordHash,
    authorizedKeys: [publicKey, ...(options.authorizedKeys ?? [])],
    hostKeyTypes,
    labConfig,
    standinsDir: statePaths.standins,
    shadowed,
  }, machineShadow));

  const token = newBootstrapToken();
  if (cluster !== null) {
    log('creating the bootstrap token in kube-sim');
    await createBootstrapToken(cluster.client, token);
    cluster.client.close();
  }
  const workerConfig = workerIgnitionConfig({
    vip: VIP,
    clusterCaPem: cluster?.connection.caPem,
    tlsServerName: cluster?.tlsServerName,
    bootstrapToken: token.token,
    sshAuthorizedKeys: [publicKey],
  });
  const vipConfig: VipServicesConfig = {
    vip: VIP,
    machineConfigTls: mcsTls,
    workerConfig,
    ...(cluster === null ? {} : { apiTarget: cluster.apiTarget }),
    faultsFile: statePaths.vipFaults,
  };
  log('starting the machine config server and the API forward on the VIP');
  if (options.vipServices === 'daemon') {
    await startDaemon(vipConfig);
  } else {
    onVip(await startVipServices(vipConfig));
  }
  if (cluster !== null) {
    await writeFile(statePaths.hostKubeconfig, kubeconfigYaml({
      server: `https://${VIP}:${API_PORT}`,
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
    [host.id, await hostKeyFingerprints(hostDirs(statePaths.host(host.id)).ssh, hostKeyTypes)] as const)));
  const record: LabRecord = {
    gateway: GATEWAY_IP,
    vip: VIP,
    subnet: SUBNET,
    hosts,
    machineConfigServer: `https://${VIP}:${MACHINE_CONFIG_PORT}`,
    machineConfigCaCert: mcsTls.caPem,
    ...(cluster === null ? {} : { apiServer: `https://${VIP}:${API_PORT}`, vipKubeconfig: statePaths.hostKubeconfig }),
    bootstrapToken: token.token,
    artifactsDir: statePaths.artifacts,
    artifactsVersion: ARTIFACTS_VERSION,
    privateKeyPath: statePaths.clientKey,
    publicKey,
    hostKeyTypes,
    hostKeyFingerprints: fingerprints,
    stateDir: statePaths.root,
    netem: await netemAvailable(),
    createdAt: new Date().toISOString(),
    ...(options.outFile === undefined ? {} : { outFile: options.outFile }),
    vipServices: options.vipServices ?? 'in-process',
  };
  await writeLabRecord(record);
  if (options.outFile !== undefined) {
    await writeFile(options.outFile, `${JSON.stringify(describeLab(record), null, 2)}\n`, { mode: 0o600 });
  }
  log(`lab up: ${hosts.length} hosts in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return record;
}

async function clientKey(): Promise<string> {
  await runCommand(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'ccos-lab', '-f', statePaths.clientKey]);
  return (await readFile(`${statePaths.clientKey}.pub`, 'utf8')).trim();
}

async function machineConfigCertificate(): Promise<{ certPem: string; keyPem: string; caPem: string }> {
  const ca = await createCertificateAuthority('machine-config-server-ca');
  const server = await issueServerCertificate(ca, { commonName: 'machine-config-server', dnsNames: ['api-int.lab.ccos.local'], ips: [VIP] });
  await mkdir(statePaths.pki, { recursive: true, mode: 0o700 });
  await writeFile(`${statePaths.pki}/machine-config-ca.crt`, ca.certPem);
  return { certPem: `${server.certPem.trim()}\n${ca.certPem.trim()}\n`, keyPem: server.keyPem, caPem: ca.certPem };
}

interface ClusterAccess {
  readonly connection: KubeConnection;
  readonly client: KubeClient;
  readonly apiTarget: { readonly host: string; readonly port: number };
  /** Set when kube-sim's certificate does not name the VIP. */
  readonly tlsServerName?: string;
}

async function clusterAccess(kubeconfig: string): Promise<ClusterAccess> {
  const connection = parseKubeconfig(kubeconfig);
  const url = new URL(connection.server);
  if (url.protocol !== 'https:') {
    throw new Error(`kube-sim must serve HTTPS for the kubelets' TLS bootstrap (kubeconfig server is ${connection.server})`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const sans = await serverCertificateNames(host, port, connection.caPem);
  const tlsServerName = sans.ips.includes(VIP) ? undefined : sans.dns[0] ?? sans.ips[0];
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

async function startDaemon(config: VipServicesConfig): Promise<void> {
  const script = `${statePaths.bin}/lab-daemon.cjs`;
  const configFile = `${statePaths.root}/vip-services.json`;
  await mkdir(statePaths.bin, { recursive: true });
  await writeExecutable(script, await bundleScript(DAEMON_ENTRY));
  await writeFile(configFile, JSON.stringify(config), { mode: 0o600 });
  const logFd = openSync(statePaths.daemonLog, 'a');
  const child = spawn(process.execPath, [script, configFile, statePaths.daemonPid], { detached: true, stdio: ['ignore', logFd, logFd], cwd: '/' });
  child.unref();
  closeSync(logFd);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (existsSync(statePaths.daemonPid)) {
      return;
    }
    if (child.pid === undefined || !processAlive(child.pid)) {
      break;
    }
    await sleep(25);
  }
  const output = await readFile(statePaths.daemonLog, 'utf8').catch(() => '');
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
