import { readFile, readdir, rm } from 'node:fs/promises';
import { labLayout, type LabLayout } from './lab-layout';
import { readRegistry, ownerAlive, removeEntry, type LabRegistryEntry } from './lab-registry';
import { readLabRecord } from './lab-state';
import { processCommandLine, processesInNamespaces, terminateProcesses } from './processes';
import { runCommand } from './run-command';
import { processAlive } from './standins/process-state';

/**
 * Removes every trace of one lab, from nothing but its id and its folder,
 * so it also cleans up after a crashed run: its daemon, every process inside
 * its namespaces (sshd, sessions, kubelets), its persisted namespaces and
 * their mounts, its network namespaces (and with them the veth pairs), its
 * bridge, its folder, the lab.json that `up` wrote, and last its registry
 * entry. Nothing whose name is not the lab's is touched.
 */
export interface CleanupReport {
  readonly id: string;
  readonly processes: number;
  readonly namespaces: readonly string[];
  readonly bridge: boolean;
  readonly mounts: number;
}

/** Cleans up one lab; safe to call when nothing of it is there. */
export async function cleanupLab(layout: LabLayout): Promise<CleanupReport> {
  const { paths } = layout;
  const record = await readLabRecord(layout);
  await stopDaemon(layout);
  const netnsNames = await labNetnsNames(layout);
  const nsFiles = [
    ...netnsNames.map((name) => `/run/netns/${name}`),
    ...(await readdir(paths.namespaces).catch(() => [] as string[])).map((file) => `${paths.namespaces}/${file}`),
  ];
  const pids = processesInNamespaces(nsFiles);
  await terminateProcesses(pids);
  const mounts = await unmountUnder(paths.root);
  for (const name of netnsNames) {
    await runCommand(['ip', 'netns', 'del', name], { allowFailure: true });
  }
  const bridge = (await runCommand(['ip', 'link', 'show', layout.bridge], { allowFailure: true })).code === 0;
  if (bridge) {
    await runCommand(['ip', 'link', 'del', layout.bridge], { allowFailure: true });
  }
  // A veth whose namespace another lab's host still pins outlives `ip netns del`; deleting its
  // machine end removes the pair.
  for (const link of await labLinks(layout)) {
    await runCommand(['ip', 'link', 'del', link], { allowFailure: true });
  }
  if ((await mountsUnder(paths.root)).length > 0) {
    throw new Error(`lab ${layout.id} cleanup: mounts remain under ${paths.root}; not removing it`);
  }
  await rm(paths.root, { recursive: true, force: true });
  if (record?.outFile !== undefined) {
    await rm(record.outFile, { force: true });
  }
  await removeEntry(layout.id);
  return { id: layout.id, processes: pids.length, namespaces: netnsNames, bridge, mounts };
}

/**
 * Cleans up every registered lab whose owner is gone (killed, crashed, or a
 * CLI daemon that died). Call it holding the lab lock. Labs with a live
 * owner, and anything not in the registry, stay as they are.
 */
export async function removeDeadLabs(log: (message: string) => void = () => undefined): Promise<LabRegistryEntry[]> {
  const dead = (await readRegistry()).filter((entry) => !ownerAlive(entry));
  for (const entry of dead) {
    log(`removing the leftovers of lab ${entry.id} (${entry.subnet}${entry.name === undefined ? '' : `, ${entry.name}`}): its owner, pid ${entry.owner.pid} (${entry.owner.command}), is gone`);
    const report = await cleanupLab(labLayout(entry.id, entry.subnet));
    log(`lab ${entry.id} removed: ${report.namespaces.length} hosts, ${report.processes} processes, ${report.mounts} mounts`);
  }
  return dead;
}

async function stopDaemon(layout: LabLayout): Promise<void> {
  const text = await readFile(layout.paths.daemonPid, 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) {
    return;
  }
  // Only a process that is this lab's daemon (pid files outlive reboots and pids get reused).
  if (!processCommandLine(pid).some((arg) => arg.startsWith(`${layout.paths.root}/`))) {
    return;
  }
  await terminateProcesses([pid], 3000);
}

async function labNetnsNames(layout: LabLayout): Promise<string[]> {
  const names = await readdir('/run/netns').catch(() => [] as string[]);
  return names.filter((name) => name.startsWith(layout.namePrefix));
}

async function labLinks(layout: LabLayout): Promise<string[]> {
  const { stdout } = await runCommand(['ip', '-o', 'link', 'show'], { allowFailure: true });
  return stdout
    .split('\n')
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name.startsWith(layout.namePrefix));
}

/** Mount points at or below `dir` in the machine's mount namespace, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

async function unmountUnder(dir: string): Promise<number> {
  let count = 0;
  for (let round = 0; round < 5; round += 1) {
    const points = await mountsUnder(dir);
    if (points.length === 0) {
      break;
    }
    for (const point of points) {
      const result = await runCommand(['umount', point], { allowFailure: true });
      if (result.code !== 0) {
        await runCommand(['umount', '-l', point], { allowFailure: true });
      }
      count += 1;
    }
  }
  return count;
}
