import { randomBytes, randomUUID } from 'node:crypto';
import { copyFile, lstat, mkdir, readFile, rm, stat, writeFile, chmod, chown } from 'node:fs/promises';
import { join } from 'node:path';
import { checkMountOrder, hostDirs, hostMountPlan, mountCommands, type HostDirs } from './host-mounts';
import { createHostNamespaces, detachNamespaceFiles, hostCommandPrefix, hostNamespaces } from './host-namespaces';
import type { LabLayout } from './lab-layout';
import { withRootPassword } from './password-hash';
import { processesInNamespaces, terminateProcesses } from './processes';
import { runCommand } from './run-command';
import { generateHostKeys, sshdConfig, startSshd, type HostKeyType } from './sshd';
import { HOST_COMMANDS, SHADOWED_DIRS } from './standin-catalogue';
import { STANDIN_FILES, type HostFaults, type HostLabConfig } from './standins/host-state';

/** How one lab host is reached over SSH (the shape of `hosts[]` in lab.json). */
export interface LabHost {
  /** Short id used by the lab's commands (`h1`). */
  readonly id: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly user: 'root';
  readonly password: string;
  /** The `ip netns` name holding the host's network. */
  readonly netns: string;
}

/** Everything needed to build one host. */
export interface HostSetup {
  readonly layout: LabLayout;
  readonly host: LabHost;
  readonly dirs: HostDirs;
  readonly passwordHash: string;
  readonly authorizedKeys: readonly string[];
  readonly hostKeyTypes: readonly HostKeyType[];
  readonly labConfig: HostLabConfig;
  readonly standinsDir: string;
  readonly shadowed: readonly { readonly path: string; readonly standin: string }[];
}

/** Machine commands (regular files, not symlinks) that the stand-ins cover inside hosts. */
export async function shadowedCommands(standinsDir: string): Promise<{ path: string; standin: string }[]> {
  const found: { path: string; standin: string }[] = [];
  for (const { entry } of HOST_COMMANDS) {
    for (const dir of SHADOWED_DIRS) {
      const path = join(dir, entry);
      const info = await lstat(path).catch(() => null);
      if (info?.isFile()) {
        found.push({ path, standin: join(standinsDir, entry) });
      }
    }
  }
  return found;
}

/**
 * Builds a host: its files on the machine, its namespaces and mounts, its
 * hostname, and its sshd (listening when this returns).
 */
export async function createHost(setup: HostSetup, machineShadow: string): Promise<void> {
  await writeHostFiles(setup, machineShadow);
  const { layout } = setup;
  await createHostNamespaces(layout, setup.host.id);
  const plan = hostMountPlan(setup.dirs, setup.standinsDir, setup.shadowed);
  checkMountOrder(plan);
  const prefix = hostCommandPrefix(layout, setup.host.id);
  await detachNamespaceFiles(layout, setup.host.id);
  for (const mount of plan) {
    for (const argv of mountCommands(mount)) {
      await runCommand([...prefix, ...argv]);
    }
  }
  await runCommand([...prefix, 'hostname', setup.host.hostname]);
  await startSshd(layout, setup.host.id, setup.dirs.run);
}

/**
 * Gives a host a fresh OS install, as a reimage from the same kickstart would: everything the host
 * gained since it was built is gone (its processes, every file written under /etc, /var, /opt,
 * /usr/local, /root and /tmp, the stand-ins' state: installed packages, units, kubelet), it gets a
 * new machine-id and new host keys, and it keeps its address, its root password and its
 * authorized keys. Returns the new machine-id.
 */
export async function reinstallHost(layout: LabLayout, host: LabHost, hostKeyTypes: readonly HostKeyType[]): Promise<string> {
  const dirs = hostDirs(layout.paths.host(host.id));
  const shadow = await readFile(join(dirs.etcUpper, 'shadow'), 'utf8');
  const passwordHash = shadow.split('\n').find((line) => line.startsWith('root:'))?.split(':')[1];
  if (passwordHash === undefined) {
    throw new Error(`lab host ${host.id} has no root entry in its shadow file`);
  }
  const authorizedKeys = (await readFile(join(dirs.home, '.ssh/authorized_keys'), 'utf8')).split('\n').filter((line) => line.trim() !== '');
  const labConfig = JSON.parse(await readFile(join(dirs.labState, STANDIN_FILES.config), 'utf8')) as HostLabConfig;

  const namespaces = hostNamespaces(layout, host.id);
  await terminateProcesses(processesInNamespaces([namespaces.mountNs, namespaces.utsNs, namespaces.netns]));
  // With no process left in them, unpinning the namespaces takes the host's mounts with them.
  for (const file of [namespaces.mountNs, namespaces.utsNs]) {
    await runCommand(['umount', file], { allowFailure: true });
    await rm(file, { force: true });
  }
  await rm(dirs.root, { recursive: true, force: true });
  const standinsDir = layout.paths.standins;
  await createHost(
    { layout, host, dirs, passwordHash, authorizedKeys, hostKeyTypes, labConfig, standinsDir, shadowed: await shadowedCommands(standinsDir) },
    await readMachineShadow(),
  );
  return (await readFile(join(dirs.etcUpper, 'machine-id'), 'utf8')).trim();
}

async function writeHostFiles(setup: HostSetup, machineShadow: string): Promise<void> {
  const { dirs, host } = setup;
  const folders: [string, number][] = [
    [dirs.etcUpper, 0o755], [dirs.etcWork, 0o755], [dirs.varUpper, 0o755], [dirs.varWork, 0o755],
    [join(dirs.etcUpper, 'systemd/system'), 0o755], [join(dirs.varUpper, 'lib/ccos-lab'), 0o755],
    [dirs.ssh, 0o755], [dirs.systemd, 0o755], [dirs.labState, 0o755], [dirs.opt, 0o755],
    [dirs.home, 0o700], [join(dirs.home, '.ssh'), 0o700], [dirs.tmp, 0o1777], [dirs.run, 0o755],
    [join(dirs.run, 'sshd'), 0o755], [join(dirs.run, 'lock'), 0o755], [dirs.usrLocal, 0o755],
    ...['bin', 'etc', 'games', 'include', 'lib', 'libexec', 'sbin', 'share', 'src'].map((name) => [join(dirs.usrLocal, name), 0o755] as [string, number]),
  ];
  for (const [folder, mode] of folders) {
    await mkdir(folder, { recursive: true });
    await chmod(folder, mode);
  }
  const shadowInfo = await stat('/etc/shadow');
  const shadowPath = join(dirs.etcUpper, 'shadow');
  await writeFile(shadowPath, withRootPassword(machineShadow, setup.passwordHash), { mode: 0o640 });
  await chown(shadowPath, 0, shadowInfo.gid);
  await chmod(shadowPath, shadowInfo.mode & 0o777);
  await writeFile(join(dirs.etcUpper, 'hostname'), `${host.hostname}\n`);
  await writeFile(join(dirs.etcUpper, 'hosts'), [
    '127.0.0.1   localhost localhost.localdomain',
    '::1         localhost localhost.localdomain ip6-localhost ip6-loopback',
    `${host.ip} ${host.hostname}`,
    '',
  ].join('\n'));
  await writeFile(join(dirs.etcUpper, 'machine-id'), `${randomBytes(16).toString('hex')}\n`, { mode: 0o444 });
  await writeFile(join(dirs.etcUpper, 'os-release'), OS_RELEASE);
  await writeFile(join(dirs.etcUpper, 'redhat-release'), 'CCOS release 4.12 (lab host)\n');
  for (const file of ['moduli', 'ssh_config']) {
    await copyFile(join('/etc/ssh', file), join(dirs.ssh, file)).catch(() => undefined);
  }
  await writeFile(join(dirs.ssh, 'sshd_config'), sshdConfig(host.ip, setup.hostKeyTypes, setup.layout.network.gateway));
  await generateHostKeys(dirs.ssh, setup.hostKeyTypes);
  await writeFile(join(dirs.home, '.ssh/authorized_keys'), setup.authorizedKeys.map((key) => `${key.trim()}\n`).join(''), { mode: 0o600 });
  for (const file of ['.bashrc', '.profile']) {
    await copyFile(join('/etc/skel', file), join(dirs.home, file)).catch(() => undefined);
  }
  await writeFile(join(dirs.labState, STANDIN_FILES.faults), `${JSON.stringify({} satisfies HostFaults)}\n`);
  await writeFile(join(dirs.labState, STANDIN_FILES.config), `${JSON.stringify(setup.labConfig, null, 2)}\n`);
  await writeFile(join(dirs.labState, STANDIN_FILES.bootId), `${randomUUID()}\n`, { mode: 0o444 });
}

/** The host's /etc/os-release: an RPM-based CCOS worker, not the machine's Debian. */
const OS_RELEASE = [
  'NAME="CCOS"',
  'VERSION="4.12 (lab host)"',
  'ID="ccos"',
  'ID_LIKE="rhel fedora"',
  'VERSION_ID="4.12"',
  'PLATFORM_ID="platform:el9"',
  'PRETTY_NAME="CCOS 4.12 (lab host)"',
  'ANSI_COLOR="0;31"',
  '',
].join('\n');

/** The machine's /etc/shadow, read once per lab. */
export function readMachineShadow(): Promise<string> {
  return readFile('/etc/shadow', 'utf8');
}
