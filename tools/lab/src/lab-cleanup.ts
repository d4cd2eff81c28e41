import { readFile, readdir, rm } from 'node:fs/promises';
import { BRIDGE_NAME, LAB_PREFIX, statePaths } from './lab-layout';
import { readLabRecord } from './lab-state';
import { processCommandLine, processesInNamespaces, terminateProcesses } from './processes';
import { processAlive } from './standins/process-state';
import { runCommand } from './run-command';

/**
 * Removes every trace of a lab, from nothing but names and the state folder,
 * so it also cleans up after a crashed run: the daemon, every process inside
 * a lab namespace (sshd, sessions, kubelets), the persisted namespaces and
 * their mounts, the network namespaces (and with them the veth pairs), the
 * bridge, the state folder and the lab.json that `up` wrote.
 */
export interface CleanupReport {
  readonly processes: number;
  readonly namespaces: readonly string[];
  readonly bridge: boolean;
  readonly mounts: number;
}

/** Cleans up; safe to call when nothing is there. */
export async function cleanupLab(): Promise<CleanupReport> {
  const record = await readLabRecord();
  await stopDaemon();
  const netnsNames = await labNetnsNames();
  const nsFiles = [
    ...netnsNames.map((name) => `/run/netns/${name}`),
    ...(await readdir(statePaths.namespaces).catch(() => [] as string[])).map((file) => `${statePaths.namespaces}/${file}`),
  ];
  const pids = processesInNamespaces(nsFiles);
  await terminateProcesses(pids);
  const mounts = await unmountUnder(statePaths.root);
  for (const name of netnsNames) {
    await runCommand(['ip', 'netns', 'del', name], { allowFailure: true });
  }
  const bridge = (await runCommand(['ip', 'link', 'show', BRIDGE_NAME], { allowFailure: true })).code === 0;
  if (bridge) {
    await runCommand(['ip', 'link', 'del', BRIDGE_NAME], { allowFailure: true });
  }
  for (const link of await strayLinks()) {
    await runCommand(['ip', 'link', 'del', link], { allowFailure: true });
  }
  if ((await mountsUnder(statePaths.root)).length > 0) {
    throw new Error(`lab cleanup: mounts remain under ${statePaths.root}; not removing it`);
  }
  await rm(statePaths.root, { recursive: true, force: true });
  if (record?.outFile !== undefined) {
    await rm(record.outFile, { force: true });
  }
  return { processes: pids.length, namespaces: netnsNames, bridge, mounts };
}

async function stopDaemon(): Promise<void> {
  const text = await readFile(statePaths.daemonPid, 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) {
    return;
  }
  // Only a process that is our daemon (pid files outlive reboots and pids get reused).
  if (!processCommandLine(pid).some((arg) => arg.includes(statePaths.root))) {
    return;
  }
  await terminateProcesses([pid], 3000);
}

async function labNetnsNames(): Promise<string[]> {
  const names = await readdir('/run/netns').catch(() => [] as string[]);
  return names.filter((name) => name.startsWith(`${LAB_PREFIX}-`));
}

async function strayLinks(): Promise<string[]> {
  const { stdout } = await runCommand(['ip', '-o', 'link', 'show'], { allowFailure: true });
  return stdout
    .split('\n')
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name.startsWith(`${LAB_PREFIX}-`));
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
