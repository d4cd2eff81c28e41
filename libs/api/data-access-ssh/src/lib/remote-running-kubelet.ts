import { type RunningKubelet, kubeletArgvOf, kubeletVersionOf, recordableRunning } from '@ccos/shared/domain';
import type { RemoteCheck } from './remote-batch';
import type { ExecResult } from './remote-exec';
import { splitSections } from './remote-facts';
import { defineScript } from './remote-script';

/**
 * The kernel and the kubelet systemd runs now, read as the agent reads them once a node is Ready:
 * `uname -r`, the base64 of `/proc/<MainPID>/cmdline` (its NULs and any newline in an argument
 * intact), and the `--version` of the executable named kubelet in it. Marker lines keep the parse
 * from shifting; what is not there is an empty section, never an error.
 */
const RUNNING_KUBELET = defineScript('running-kubelet', [
  'echo "@@kernel"; uname -r 2>/dev/null',
  'pid=$(systemctl show kubelet -p MainPID --value 2>/dev/null)',
  'exe=',
  'echo "@@cmdline"',
  'case $pid in ""|0|*[!0-9]*) ;; *)',
  '  if [ -r "/proc/$pid/cmdline" ]; then',
  '    base64 < "/proc/$pid/cmdline" 2>/dev/null | tr -d "\\n"; echo',
  '    exe=$(tr "\\000" "\\n" < "/proc/$pid/cmdline" | while IFS= read -r a; do case ${a##*/} in kubelet) printf "%s" "$a"; break;; esac; done)',
  '  fi;;',
  'esac',
  'echo "@@version"; "${exe:-kubelet}" --version 2>/dev/null | head -n 1',
  'echo "@@end"',
].join('\n'));

/** The kernel and the running kubelet (version, arguments with secrets hidden) as a check for `runChecks`. */
export function runningKubeletCheck(): RemoteCheck<RunningKubelet> {
  return { script: RUNNING_KUBELET, args: [], read: (result: ExecResult) => parseRunningKubelet(result.stdout) };
}

/** Reads the running-kubelet script's output as the agent's report is read; sections it lacks are null (or no flags). */
export function parseRunningKubelet(output: string): RunningKubelet {
  const sections = splitSections(output);
  const section = (name: string): string => (sections.get(name) ?? '').trim();
  return recordableRunning({
    kernelRelease: section('kernel').split('\n')[0]?.trim(),
    kubeletVersion: kubeletVersionOf(section('version')),
    kubeletFlags: kubeletArgvOf(Buffer.from(section('cmdline'), 'base64').toString('utf8')).flags,
  });
}
