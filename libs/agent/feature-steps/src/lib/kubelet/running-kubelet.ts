import type { Executor, FileSystem } from '@ccos/agent/util-host';
import { succeeded } from '@ccos/agent/util-host';
import { type RunningKubelet, recordableFlags } from '@ccos/shared/domain';

const KUBELET_VERSION = /\bv\d+\.\d+\.\d+[\w.+-]*/;

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
  let argv: string[] = [];
  if (succeeded(mainPid) && /^[1-9]\d*$/.test(pid)) {
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`).then((data) => data.toString('utf8'), () => '');
    argv = cmdline.split('\0').filter((argument, index, all) => argument !== '' || index < all.length - 1);
  }
  const executable = argv.findIndex((argument) => argument.split('/').pop() === 'kubelet');
  const version = await exec.run([executable >= 0 ? argv[executable] : 'kubelet', '--version'], { timeoutMs: 30_000 });
  return {
    kernelRelease: succeeded(kernel) && kernel.stdout.trim() !== '' ? kernel.stdout.trim() : null,
    kubeletVersion: succeeded(version) ? (KUBELET_VERSION.exec(version.stdout)?.[0] ?? null) : null,
    kubeletFlags: executable >= 0 ? recordableFlags(argv.slice(executable + 1)) : [],
  };
}
