import { join } from 'node:path';
import { HOST_LAB_STATE_PATH } from './lab-layout';
import { BOOT_ID_PATH, STANDIN_FILES } from './standins/host-state';

/** One mount made inside a host's mount namespace. */
export type HostMount =
  | { readonly type: 'overlay'; readonly target: string; readonly upper: string; readonly work: string }
  | { readonly type: 'bind'; readonly source: string; readonly target: string; readonly readOnly?: boolean }
  | { readonly type: 'sysfs'; readonly target: '/sys' };

/**
 * What a host sees as its own. `/etc` and `/var` are copy-on-write overlays
 * of the machine's (a fresh host inherits PAM, CA bundles, users; whatever it
 * writes, e.g. `/etc/kubernetes`, `/etc/shadow`, `/var/lib/kubelet`, stays
 * its own); the others are fresh folders. Everything else (`/usr` but
 * `/usr/local`, `/home`, ...) is the machine's, shared and not to be written.
 */
export const PRIVATE_PATHS = [
  '/etc',
  '/etc/ssh',
  '/etc/systemd/system',
  '/var',
  HOST_LAB_STATE_PATH,
  '/opt',
  '/root',
  '/tmp',
  '/usr/local',
  '/run',
] as const;

/** The machine-side folders of one host (all under its state folder). */
export interface HostDirs {
  readonly root: string;
  readonly etcUpper: string;
  readonly etcWork: string;
  readonly varUpper: string;
  readonly varWork: string;
  readonly ssh: string;
  readonly systemd: string;
  readonly labState: string;
  readonly opt: string;
  readonly home: string;
  readonly tmp: string;
  readonly usrLocal: string;
  readonly run: string;
}

/** Where a host's own files live on the machine. */
export function hostDirs(hostRoot: string): HostDirs {
  return {
    root: hostRoot,
    etcUpper: join(hostRoot, 'upper/etc'),
    etcWork: join(hostRoot, 'work/etc'),
    varUpper: join(hostRoot, 'upper/var'),
    varWork: join(hostRoot, 'work/var'),
    ssh: join(hostRoot, 'etc-ssh'),
    systemd: join(hostRoot, 'etc-systemd-system'),
    labState: join(hostRoot, 'lab-state'),
    opt: join(hostRoot, 'opt'),
    home: join(hostRoot, 'root'),
    tmp: join(hostRoot, 'tmp'),
    usrLocal: join(hostRoot, 'usr-local'),
    run: join(hostRoot, 'run'),
  };
}

/**
 * The mounts that make a host, in order. Their sources live under the lab's
 * state folder in `/run`, so `/run` is covered last; {@link checkMountOrder}
 * proves no source is hidden by an earlier mount.
 *
 * @param standinsDir the built stand-ins, shown read-only as `/usr/local/sbin`
 * @param shadowed machine files (`/usr/bin/systemctl`, ...) each covered by the
 *   stand-in of the same name, for callers that use absolute paths
 */
export function hostMountPlan(
  dirs: HostDirs,
  standinsDir: string,
  shadowed: readonly { readonly path: string; readonly standin: string }[],
): HostMount[] {
  return [
    { type: 'overlay', target: '/etc', upper: dirs.etcUpper, work: dirs.etcWork },
    { type: 'bind', source: dirs.ssh, target: '/etc/ssh' },
    { type: 'bind', source: dirs.systemd, target: '/etc/systemd/system' },
    { type: 'overlay', target: '/var', upper: dirs.varUpper, work: dirs.varWork },
    { type: 'bind', source: dirs.labState, target: HOST_LAB_STATE_PATH },
    { type: 'bind', source: dirs.opt, target: '/opt' },
    { type: 'bind', source: dirs.home, target: '/root' },
    { type: 'bind', source: dirs.tmp, target: '/tmp' },
    { type: 'bind', source: dirs.usrLocal, target: '/usr/local' },
    { type: 'bind', source: standinsDir, target: '/usr/local/sbin', readOnly: true },
    ...shadowed.map(({ path, standin }) => ({ type: 'bind' as const, source: standin, target: path, readOnly: true })),
    { type: 'sysfs', target: '/sys' },
    // The host's own boot id, which its reboot changes (the kernel's is the machine's).
    { type: 'bind', source: join(dirs.labState, STANDIN_FILES.bootId), target: BOOT_ID_PATH },
    { type: 'bind', source: dirs.run, target: '/run' },
  ];
}

/** The commands (argv) that make one mount, run inside the host's namespaces. */
export function mountCommands(mount: HostMount): string[][] {
  switch (mount.type) {
    case 'overlay':
      return [[
        'mount', '-t', 'overlay', 'overlay',
        '-o', `lowerdir=${mount.target},upperdir=${mount.upper},workdir=${mount.work}`,
        mount.target,
      ]];
    case 'bind':
      return [
        ['mount', '--bind', mount.source, mount.target],
        ...(mount.readOnly ? [['mount', '-o', 'remount,bind,ro', mount.target]] : []),
      ];
    case 'sysfs':
      // Like `ip netns exec`: a sysfs mounted from inside the network
      // namespace shows that namespace's interfaces under /sys/class/net.
      return [['umount', '-l', '/sys'], ['mount', '-t', 'sysfs', 'sysfs', '/sys']];
  }
}

/** Throws when a mount's source would be hidden by an earlier mount's target. */
export function checkMountOrder(plan: readonly HostMount[]): void {
  const covered: string[] = [];
  for (const mount of plan) {
    const sources = mount.type === 'overlay' ? [mount.upper, mount.work] : mount.type === 'bind' ? [mount.source] : [];
    for (const source of sources) {
      const hiddenBy = covered.find((target) => isWithin(source, target));
      if (hiddenBy !== undefined) {
        throw new Error(`mount plan: ${source} is hidden by the earlier mount on ${hiddenBy}`);
      }
    }
    covered.push(mount.target);
  }
}

/** Whether `path` is `dir` or lies below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
