import { mkdir, writeFile } from 'node:fs/promises';
import { netnsName, statePaths } from './lab-layout';
import { runCommand, type RunOptions, type CommandResult } from './run-command';

/**
 * The namespaces that make a lab host: a network namespace (`ip netns`), and
 * a mount and a UTS namespace persisted as bind mounts of their nsfs files
 * under the lab's state folder, so they outlive any process and every command
 * the lab runs "on the host" can enter all three.
 */
export interface HostNamespaces {
  readonly netns: string;
  readonly mountNs: string;
  readonly utsNs: string;
}

/** The namespace files of a host. */
export function hostNamespaces(id: string): HostNamespaces {
  return {
    netns: `/run/netns/${netnsName(id)}`,
    mountNs: statePaths.mountNamespace(id),
    utsNs: statePaths.utsNamespace(id),
  };
}

/**
 * Makes the folder holding persisted namespace files a private bind mount of
 * itself: the kernel refuses to persist a mount namespace on a mount that
 * would propagate into it.
 */
export async function prepareNamespaceFolder(): Promise<void> {
  await mkdir(statePaths.namespaces, { recursive: true });
  await runCommand(['mount', '--bind', statePaths.namespaces, statePaths.namespaces]);
  await runCommand(['mount', '--make-private', statePaths.namespaces]);
}

/**
 * Creates a host's mount and UTS namespaces (mounts private to it from the
 * start). The network namespace is made by {@link createNetwork}.
 */
export async function createHostNamespaces(id: string): Promise<HostNamespaces> {
  const ns = hostNamespaces(id);
  await writeFile(ns.mountNs, '');
  await writeFile(ns.utsNs, '');
  await runCommand(['unshare', `--mount=${ns.mountNs}`, `--uts=${ns.utsNs}`, '--propagation', 'private', 'true']);
  return ns;
}

/** The argv prefix that runs a command inside a host's namespaces. */
export function hostCommandPrefix(id: string, options: { network?: boolean } = {}): string[] {
  const ns = hostNamespaces(id);
  return [
    'nsenter',
    ...(options.network === false ? [] : [`--net=${ns.netns}`]),
    `--mount=${ns.mountNs}`,
    `--uts=${ns.utsNs}`,
    '--',
  ];
}

/** Runs a command inside a host's namespaces (as root, with the machine's credentials). */
export function runInHost(id: string, argv: readonly string[], options?: RunOptions): Promise<CommandResult> {
  return runCommand([...hostCommandPrefix(id), ...argv], options);
}
