import type { InstallStep } from './install-steps';

/**
 * What a host runs, as its last install left it: every file the agent wrote (binaries, units,
 * Ignition's files and units, kubelet's sysconfig) with its SHA-256, and the artifact set they came
 * from. A step's SUCCEEDED event carries the files it wrote under `detail.written`
 * ({@link WRITTEN_FILES_KEY}: path → SHA-256), so a run resumed at a later step still has the
 * earlier steps' files in their own events.
 */
export const WRITTEN_FILES_KEY = 'written';

/** path → lower-case hex SHA-256. */
export type WrittenFiles = Readonly<Record<string, string>>;

/** One file of a host's manifest, and the step that wrote it last. */
export interface ManifestFile {
  readonly path: string;
  readonly sha256: string;
  readonly step: InstallStep;
}

/** A recorded file that is not as recorded: changed (`found` is its hash now) or gone (`found` null). */
export interface FileDrift {
  readonly path: string;
  readonly expected: string;
  readonly found: string | null;
}

/**
 * CURRENT: inspected, every file as recorded, on the cluster's artifact set. DRIFTED: the last
 * inspection found files changed or gone. OUTDATED: installed from another set than the cluster's
 * now. UNINSPECTED: recorded, not inspected since.
 */
export const HOST_MANIFEST_STATES = ['CURRENT', 'DRIFTED', 'OUTDATED', 'UNINSPECTED'] as const;
export type HostManifestState = (typeof HOST_MANIFEST_STATES)[number];

const SHA256_HEX = /^[0-9a-f]{64}$/;
const MAX_TEXT = 4096;

/** Non-empty text of at most 4,096 characters without control characters, as a host may report it to be shown. */
function isPlainText(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= MAX_TEXT && ![...value].some((char) => char < ' ' || char === '\x7f');
}

/** An absolute path without `.`/`..` segments or control characters. */
function isHostPath(path: string): boolean {
  return path.startsWith('/') && isPlainText(path) && !path.split('/').some((segment) => segment === '.' || segment === '..');
}

/** The files a step event's detail says the step wrote; entries that are no absolute path and hash are left out. */
export function writtenFilesOf(detail: unknown): WrittenFiles {
  const written = typeof detail === 'object' && detail !== null ? (detail as Record<string, unknown>)[WRITTEN_FILES_KEY] : undefined;
  if (typeof written !== 'object' || written === null || Array.isArray(written)) {
    return {};
  }
  const files: Record<string, string> = {};
  for (const [path, sha256] of Object.entries(written)) {
    if (isHostPath(path) && typeof sha256 === 'string' && SHA256_HEX.test(sha256)) {
      files[path] = sha256;
    }
  }
  return files;
}

/** The manifest from a run's steps in the order they succeeded: a later step's write of a path wins. */
export function manifestOf(steps: ReadonlyArray<{ readonly step: InstallStep; readonly detail: unknown }>): ManifestFile[] {
  const files = new Map<string, ManifestFile>();
  for (const { step, detail } of steps) {
    for (const [path, sha256] of Object.entries(writtenFilesOf(detail))) {
      files.set(path, { path, sha256, step });
    }
  }
  return [...files.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/** The recorded files that are not as recorded, by what an inspection found (path → hash, null when gone). */
export function driftOf(recorded: readonly ManifestFile[], found: ReadonlyMap<string, string | null>): FileDrift[] {
  return recorded
    .filter((file) => found.has(file.path) && found.get(file.path) !== file.sha256)
    .map((file) => ({ path: file.path, expected: file.sha256, found: found.get(file.path) ?? null }));
}

/** The state of a host by its last inspection and whether its set is still the cluster's. */
export function hostManifestState(manifest: { readonly inspectedAt: Date | string | null; readonly drift: readonly FileDrift[] }, onClusterSet: boolean): HostManifestState {
  if (manifest.drift.length > 0) {
    return 'DRIFTED';
  }
  if (!onClusterSet) {
    return 'OUTDATED';
  }
  return manifest.inspectedAt === null ? 'UNINSPECTED' : 'CURRENT';
}

/**
 * What runs on a host besides its files, as START_KUBELET found it once the Node was Ready: its
 * SUCCEEDED event carries it under `detail.running` ({@link RUNNING_KEY}).
 */
export const RUNNING_KEY = 'running';

/** The kernel the host booted and the kubelet running there: its version and the flags it was started with. */
export interface RunningKubelet {
  /** `uname -r`. */
  readonly kernelRelease: string | null;
  /** e.g. `v1.31.4`, from `kubelet --version`. */
  readonly kubeletVersion: string | null;
  /** The running kubelet's arguments after its executable, in order (values of secret-looking flags are replaced). */
  readonly kubeletFlags: readonly string[];
}

/** What differs between what ran at install and what an inspection found running. */
export const RUNNING_CHANGES = ['KERNEL', 'KUBELET_VERSION', 'KUBELET_FLAGS'] as const;
export type RunningChange = (typeof RUNNING_CHANGES)[number];

/**
 * What changed since the install: a kernel booted since (another release), another kubelet, or
 * kubelet started with other arguments. A side that was not read (null, an older agent) changes
 * nothing; flags compare only when both sides read some.
 */
export function runningChanges(atInstall: RunningKubelet | null, now: RunningKubelet | null): RunningChange[] {
  if (!atInstall || !now) {
    return [];
  }
  const changes: RunningChange[] = [];
  if (atInstall.kernelRelease !== null && now.kernelRelease !== null && atInstall.kernelRelease !== now.kernelRelease) {
    changes.push('KERNEL');
  }
  if (atInstall.kubeletVersion !== null && now.kubeletVersion !== null && atInstall.kubeletVersion !== now.kubeletVersion) {
    changes.push('KUBELET_VERSION');
  }
  if (atInstall.kubeletFlags.length > 0 && now.kubeletFlags.length > 0 && atInstall.kubeletFlags.join('\0') !== now.kubeletFlags.join('\0')) {
    changes.push('KUBELET_FLAGS');
  }
  return changes;
}

const MAX_FLAGS = 200;

/** What a START_KUBELET event's detail says runs on the host; null when it says nothing (an older agent). */
export function runningKubeletOf(detail: unknown): RunningKubelet | null {
  const running = typeof detail === 'object' && detail !== null ? (detail as Record<string, unknown>)[RUNNING_KEY] : undefined;
  return typeof running === 'object' && running !== null && !Array.isArray(running) ? recordableRunning(running as Record<string, unknown>) : null;
}

/**
 * The kernel and kubelet a host reported (its agent, or an inspection's script) as they may be
 * kept and shown: values that are not plain, bounded text are left out, at most 200 flags.
 */
export function recordableRunning(fields: Readonly<Record<string, unknown>>): RunningKubelet {
  const flags = Array.isArray(fields['kubeletFlags']) ? fields['kubeletFlags'].filter(isPlainText).slice(0, MAX_FLAGS) : [];
  return {
    kernelRelease: isPlainText(fields['kernelRelease']) ? fields['kernelRelease'] : null,
    kubeletVersion: isPlainText(fields['kubeletVersion']) ? fields['kubeletVersion'] : null,
    kubeletFlags: flags,
  };
}

/**
 * The running kubelet's executable and arguments out of its `/proc/<pid>/cmdline` (NUL-separated):
 * those after the first word naming a `kubelet` executable, so a kubelet started through an
 * interpreter (`node /usr/local/bin/kubelet …`) reads as one started directly; secrets hidden.
 */
export function kubeletArgvOf(cmdline: string): { readonly executable: string | null; readonly flags: string[] } {
  const argv = cmdline.split('\0');
  if (argv.at(-1) === '') {
    argv.pop();
  }
  const at = argv.findIndex((argument) => argument.split('/').pop() === 'kubelet');
  return at < 0 ? { executable: null, flags: [] } : { executable: argv[at] ?? null, flags: recordableFlags(argv.slice(at + 1)) };
}

/** The version (`v1.31.4`, `v1.31.4+rhcos.1`) out of `kubelet --version`'s `Kubernetes v1.31.4`; null when it names none. */
export function kubeletVersionOf(text: string): string | null {
  return /\bv\d+\.\d+\.\d+[\w.+-]*/.exec(text)?.[0] ?? null;
}

const SECRET_FLAG = /^--?[\w.-]*(token|password|secret)[\w.-]*$/i;

/**
 * Kubelet arguments as they may be recorded and shown: the value of a flag whose name looks like a
 * secret (`--x-token=…` or `--x-token …`) is replaced.
 */
export function recordableFlags(argv: readonly string[]): string[] {
  return argv.map((argument, index) => {
    const [name, ...value] = argument.split('=');
    if (SECRET_FLAG.test(name) && value.length > 0) {
      return `${name}=<redacted>`;
    }
    const previous = argv[index - 1];
    return previous !== undefined && SECRET_FLAG.test(previous) && !argument.startsWith('-') ? '<redacted>' : argument;
  });
}
