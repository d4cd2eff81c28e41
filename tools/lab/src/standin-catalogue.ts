/**
 * The stand-ins with real names. Each entry is `src/standins/<entry>.ts`,
 * bundled at `up` time into one self-contained Node script per command.
 */

/** Commands every host has on its PATH (`/usr/local/sbin`), with the names that run the same script. */
export const HOST_COMMANDS: readonly { readonly entry: string; readonly aliases: readonly string[] }[] = [
  { entry: 'systemctl', aliases: ['reboot', 'shutdown', 'poweroff', 'halt'] },
  { entry: 'journalctl', aliases: [] },
  { entry: 'timedatectl', aliases: [] },
  { entry: 'hostnamectl', aliases: [] },
  { entry: 'swapon', aliases: [] },
  { entry: 'swapoff', aliases: [] },
  { entry: 'sysctl', aliases: [] },
  { entry: 'rpm', aliases: [] },
  { entry: 'dnf', aliases: ['yum'] },
];

/** The binaries the installer service serves (`artifacts/binary/<name>`), downloaded by the agent. */
export const ARTIFACT_BINARIES = [
  'oc',
  'hyperkube',
  'kubelet',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'ignition',
  'coreos-installer',
] as const;

/** Folders where a machine command of a stand-in's name is covered inside the hosts. */
export const SHADOWED_DIRS = ['/usr/bin', '/usr/sbin'] as const;

/** The stand-in entry behind an artifact binary: the kubelet is real enough to join; the rest print versions. */
export function artifactEntry(name: (typeof ARTIFACT_BINARIES)[number]): string {
  return name === 'kubelet' ? 'kubelet' : 'release-binary';
}

/** Every entry point to bundle. */
export function standinEntries(): string[] {
  return [...new Set([...HOST_COMMANDS.map(({ entry }) => entry), ...ARTIFACT_BINARIES.map(artifactEntry)])];
}
