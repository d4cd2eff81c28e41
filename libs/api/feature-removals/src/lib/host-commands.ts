import { type ExecResult, type SshPool, type SshTarget, defineScript, isSshError } from '@ccos/api/data-access-ssh';
import { type CodedText, message } from '@ccos/shared/messages';

/** What stopping the kubelet came to. */
export type KubeletStop =
  | { readonly outcome: 'STOPPED'; readonly message: CodedText }
  /** No kubelet unit on the host: nothing can register the Node again. */
  | { readonly outcome: 'NOT_INSTALLED'; readonly message: CodedText }
  /** The host cannot be reached (or logged in to): nothing was run. */
  | { readonly outcome: 'UNREACHABLE'; readonly message: CodedText }
  /** Reached, but `systemctl stop kubelet` failed: the Node must not be deleted. */
  | { readonly outcome: 'FAILED'; readonly message: CodedText };

/** What cleaning a host came to: the paths that existed and were removed. */
export interface HostCleaning {
  /** The host answered over SSH (false: nothing was run on it). */
  readonly reached: boolean;
  readonly ok: boolean;
  readonly removed: string[];
  readonly message: CodedText;
}

/** What a removal runs on a node's host. */
export interface HostCommands {
  stopKubelet(target: SshTarget, signal?: AbortSignal): Promise<KubeletStop>;
  cleanHost(target: SshTarget, signal?: AbortSignal): Promise<HostCleaning>;
}

/** What the agent installed on a host (the agent folder, bootstrap kubeconfig, kubelet credentials and unit). */
export const HOST_CLEAN_PATHS = [
  '/opt/ccos-scaler',
  '/etc/kubernetes/kubeconfig',
  '/var/lib/kubelet/kubeconfig',
  '/var/lib/kubelet/pki',
  '/etc/systemd/system/kubelet.service',
  '/etc/systemd/system/kubelet.service.d',
  '/etc/systemd/system/multi-user.target.wants/kubelet.service',
] as const;

/** Removes the paths it is given (fixed in code: HOST_CLEAN_PATHS), says which existed, and reloads systemd. */
const CLEAN_HOST = defineScript(
  'clean-host',
  ['status=0', 'for p in "$@"; do', '  if [ -e "$p" ] || [ -L "$p" ]; then', '    rm -rf -- "$p" && echo "$p" || status=1', '  fi', 'done', 'systemctl daemon-reload >/dev/null 2>&1 || true', 'exit $status'].join('\n'),
);

const EXEC_TIMEOUT_MS = 60_000;

const tail = (result: ExecResult): string => (result.stderr || result.stdout).trim().slice(-300) || `exit ${String(result.exitCode)}`;

/** An SSH failure that means "not reached" (the kubelet may or may not run; nothing can be done over SSH). */
function unreachable(error: unknown): string | null {
  return isSshError(error) ? error.message : null;
}

/** What went wrong, coded: the SSH failure's own message (connecting, logging in), else the error's text as data. */
function failureText(error: unknown): CodedText {
  if (isSshError(error) && error.coded) {
    return error.coded;
  }
  return message('removal.host.raw', { text: error instanceof Error ? error.message : String(error) });
}

/**
 * `systemctl stop kubelet` and `systemctl disable kubelet` on the host, so the kubelet neither
 * registers the Node again once it is deleted nor comes back at the next boot.
 * @see https://kubernetes.io/docs/concepts/architecture/nodes/#self-registration-of-nodes
 */
export async function stopKubelet(pool: SshPool, target: SshTarget, signal?: AbortSignal): Promise<KubeletStop> {
  try {
    return await pool.run(
      target,
      async (session): Promise<KubeletStop> => {
        const stop = await session.exec(['systemctl', 'stop', 'kubelet'], { timeoutMs: EXEC_TIMEOUT_MS, signal });
        if (stop.exitCode === 5) {
          return { outcome: 'NOT_INSTALLED', message: message('removal.host.noKubelet', { host: session.endpoint, output: tail(stop) }) };
        }
        if (stop.exitCode !== 0) {
          return { outcome: 'FAILED', message: message('removal.host.stopFailed', { host: session.endpoint, output: tail(stop) }) };
        }
        const disable = await session.exec(['systemctl', 'disable', 'kubelet'], { timeoutMs: EXEC_TIMEOUT_MS, signal });
        return {
          outcome: 'STOPPED',
          message: disable.exitCode === 0 ? message('removal.host.kubeletStopped', { host: session.endpoint }) : message('removal.host.kubeletStoppedNotDisabled', { host: session.endpoint, output: tail(disable) }),
        };
      },
      { signal },
    );
  } catch (error) {
    return { outcome: unreachable(error) ? 'UNREACHABLE' : 'FAILED', message: failureText(error) };
  }
}

/** Removes {@link HOST_CLEAN_PATHS} from the host; what existed is listed. Never throws. */
export async function cleanHost(pool: SshPool, target: SshTarget, signal?: AbortSignal): Promise<HostCleaning> {
  try {
    return await pool.run(
      target,
      async (session) => {
        const result = await session.runScript(CLEAN_HOST, [...HOST_CLEAN_PATHS], { timeoutMs: EXEC_TIMEOUT_MS, signal });
        const removed = result.stdout.split('\n').filter((line) => line.startsWith('/'));
        return result.exitCode === 0
          ? { reached: true, ok: true, removed, message: removed.length > 0 ? message('removal.host.cleaned', { removed: removed.join(', '), host: session.endpoint }) : message('removal.host.nothingLeft', { host: session.endpoint }) }
          : { reached: true, ok: false, removed, message: message('removal.host.cleanFailed', { host: session.endpoint, output: tail(result) }) };
      },
      { signal },
    );
  } catch (error) {
    return { reached: unreachable(error) === null, ok: false, removed: [], message: failureText(error) };
  }
}

/** The host commands over the SSH pool (its pinned host keys and session limits). */
export function sshHostCommands(pool: SshPool): HostCommands {
  return { stopKubelet: (target, signal) => stopKubelet(pool, target, signal), cleanHost: (target, signal) => cleanHost(pool, target, signal) };
}

/** Whether a login works now (for the preview). */
export async function probeHost(pool: SshPool, target: SshTarget): Promise<{ reachable: boolean; message: CodedText }> {
  try {
    return await pool.run(target, async (session) => {
      const result = await session.exec(['true'], { timeoutMs: 10_000 });
      return result.exitCode === 0 ? { reachable: true, message: message('removal.host.answers', { host: session.target }) } : { reachable: false, message: message('removal.host.output', { host: session.target, output: tail(result) }) };
    });
  } catch (error) {
    return { reachable: false, message: failureText(error) };
  }
}
