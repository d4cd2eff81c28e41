import { mkdir, writeFile } from 'node:fs/promises';
import type { LabLayout } from './lab-layout';
import { runCommand, type RunOptions, type CommandResult } from './run-command';

/**
 * The namespaces that make a lab host: a network namespace (`ip netns`), and
 * a mount and a UTS namespace persisted as bind mounts of their nsfs files
 * under the lab's folder, so they outlive any process and every command the
 * lab runs "on the host" can enter all three.
 */
export interface HostNamespaces {
  readonly netns: string;
  readonly mountNs: string;
  readonly utsNs: string;
}

/** The namespace files of a host. */
export function hostNamespaces(layout: LabLayout, id: string): HostNamespaces {
  return {
    netns: `/run/netns/${layout.netnsName(id)}`,
    mountNs: layout.paths.mountNamespace(id),
    utsNs: layout.paths.utsNamespace(id),
  };
}

/**
 * Makes the folder holding persisted namespace files a private bind mount of
 * itself: the kernel refuses to persist a mount namespace on a mount that
 * would propagate into it.
 */
export async function prepareNamespaceFolder(layout: LabLayout): Promise<void> {
  await mkdir(layout.paths.namespaces, { recursive: true });
  await runCommand(['mount', '--bind', layout.paths.namespaces, layout.paths.namespaces]);
  await runCommand(['mount', '--make-private', layout.paths.namespaces]);
}

/**
 * Creates a host's mount and UTS namespaces (mounts private to it from the
 * start). The network namespace is made by {@link createHostLinks}.
 */
export async function createHostNamespaces(layout: LabLayout, id: string): Promise<HostNamespaces> {
  const ns = hostNamespaces(layout, id);
  await writeFile(ns.mountNs, '');
  await writeFile(ns.utsNs, '');
  await runCommand(['unshare', `--mount=${ns.mountNs}`, `--uts=${ns.utsNs}`, '--propagation', 'private', 'true']);
  return ns;
}

/**
 * Unmounts, inside a new host's mount namespace, the copies it got of every
 * namespace file on the machine (`/run/netns/*`, every lab's persisted
 * namespaces, of this lab and of others) and of the folders holding them. A
 * copy would keep that namespace alive as long as this host lives: another
 * lab's hosts (and their veth pairs) would outlive that lab's cleanup. A lazy
 * unmount detaches everything below a mount point too, so one command does it.
 */
export async function detachNamespaceFiles(layout: LabLayout, id: string): Promise<void> {
  const prefix = hostCommandPrefix(layout, id, { network: false });
  // Another lab stopping meanwhile takes its mount points away between the read and the unmount
  // (umount then exits 32 for them): read again, and fail only while points remain.
  for (let round = 0; ; round += 1) {
    const { stdout } = await runCommand([...prefix, 'cat', '/proc/self/mountinfo']);
    const points = namespaceMountPoints(stdout);
    if (points.length === 0) {
      return;
    }
    const result = await runCommand([...prefix, 'umount', '-l', ...points], { allowFailure: round < 4 });
    if (result.code === 0) {
      return;
    }
  }
}

/**
 * The mount points to detach so that no nsfs file of a mountinfo text stays
 * mounted: the folders holding persisted namespaces under `/run` (`/run/netns`,
 * a lab's `ns` folder, which {@link prepareNamespaceFolder} bind-mounts onto
 * itself) and any nsfs file outside them; none lies below another.
 */
export function namespaceMountPoints(mountinfo: string): string[] {
  const points: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    const point = fields[4]?.replace(/\\040/g, ' ');
    if (point === undefined || separator < 0) {
      continue;
    }
    const folder = point.startsWith('/run/') && (point === '/run/netns' || /\/ns$/.test(point));
    if (folder || fields[separator + 1] === 'nsfs') {
      points.push(point);
    }
  }
  const unique = [...new Set(points)].sort();
  return unique.filter((point) => !unique.some((other) => other !== point && point.startsWith(`${other}/`)));
}

/** The argv prefix that runs a command inside a host's namespaces. */
export function hostCommandPrefix(layout: LabLayout, id: string, options: { network?: boolean } = {}): string[] {
  const ns = hostNamespaces(layout, id);
  return [
    'nsenter',
    ...(options.network === false ? [] : [`--net=${ns.netns}`]),
    `--mount=${ns.mountNs}`,
    `--uts=${ns.utsNs}`,
    '--',
  ];
}

/** Runs a command inside a host's namespaces (as root, with the machine's credentials). */
export function runInHost(layout: LabLayout, id: string, argv: readonly string[], options?: RunOptions): Promise<CommandResult> {
  return runCommand([...hostCommandPrefix(layout, id), ...argv], options);
}
