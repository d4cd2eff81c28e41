import type { Executor, FileSystem } from '@ccos/agent/util-host';
import { succeeded } from '@ccos/agent/util-host';
import { type RunningKubelet, kubeletArgvOf, kubeletVersionOf } from '@ccos/shared/domain';

/**
 * The kernel the host runs and the kubelet systemd started: its arguments from
 * `/proc/<MainPID>/cmdline` (those after the `kubelet` executable, so a kubelet started through an
 * interpreter reads the same) and its version from that executable's `--version`. What cannot be
 * read is null (or no flags): this is a record, never a reason to fail the install.
 */
export async function readRunningKubelet(exec: Executor, fs: FileSystem): Promise<RunningKubelet> {
  const kernel = await exec.run(['uname', '-r'], { timeoutMs: 10_000 });
  const mainPid = await exec.run(['systemctl', 'show', 'kubelet', '-p', 'MainPID', '--value'], { timeoutMs: 30_000 });
  const pid = mainPid.stdout.trim();
  const cmdline = succeeded(mainPid) && /^[1-9]\d*$/.test(pid) ? await fs.readFile(`/proc/${pid}/cmdline`).then((data) => data.toString('utf8'), () => '') : '';
  const { executable, flags } = kubeletArgvOf(cmdline);
  const version = await exec.run([executable ?? 'kubelet', '--version'], { timeoutMs: 30_000 });
  return {
    kernelRelease: succeeded(kernel) && kernel.stdout.trim() !== '' ? kernel.stdout.trim() : null,
    kubeletVersion: succeeded(version) ? kubeletVersionOf(version.stdout) : null,
    kubeletFlags: flags,
  };
}
