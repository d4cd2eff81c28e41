import { type RemoteCheck, type SshSession, defineScript } from '@ccos/api/data-access-ssh';
import { type HostScan, KUBECONFIG_PATHS, parseHostScan } from '@ccos/shared/domain';

/**
 * One round trip for what an earlier membership may have left on a host: its machine-id,
 * kubelet certificates, kubeconfigs, anything under /etc/kubernetes, and a kubelet that
 * runs or is enabled. Sections as `@@name` lines, parsed by the domain's parseHostScan.
 */
const SCAN = defineScript('leftover-scan', [
  'echo "@@machine-id"; cat /etc/machine-id 2>/dev/null',
  'echo "@@kubelet-pki"; [ -d /var/lib/kubelet/pki ] && find /var/lib/kubelet/pki -mindepth 1 -maxdepth 1 \\( -type f -o -type l \\) 2>/dev/null | head -100',
  `echo "@@kubeconfig"; for f in ${KUBECONFIG_PATHS.join(' ')}; do [ -e "$f" ] && echo "$f"; done`,
  'echo "@@kubernetes-files"; [ -d /etc/kubernetes ] && find /etc/kubernetes -mindepth 1 \\( -type f -o -type l \\) 2>/dev/null | head -200',
  // One systemctl for both states (what is-active and is-enabled print); each is one word.
  'active= enabled=',
  'set -f; for line in $(systemctl show -p ActiveState -p UnitFileState kubelet 2>/dev/null); do case $line in ActiveState=*) active=${line#*=} ;; UnitFileState=*) enabled=${line#*=} ;; esac; done; set +f',
  'echo "@@kubelet-active"; [ -n "$active" ] && echo "$active"',
  'echo "@@kubelet-enabled"; [ -n "$enabled" ] && echo "$enabled"',
  'echo "@@end"',
].join('\n'));

/** Stops and disables the kubelet, then deletes the files given (already limited to the kubelet and kubernetes folders). */
const CLEANUP = defineScript('leftover-cleanup', [
  'systemctl disable --now kubelet >/dev/null 2>&1 || true',
  'for f in "$@"; do rm -f -- "$f" || exit 1; done',
  'echo cleaned',
].join('\n'));

/** The leftover scan as a check for `runChecks`, to share one exec with others. */
export const LEFTOVER_SCAN: RemoteCheck<HostScan> = { script: SCAN, args: [], read: (result) => parseHostScan(result.stdout) };

export async function scanHost(session: SshSession): Promise<HostScan> {
  return LEFTOVER_SCAN.read(await session.runScript(SCAN, [], { timeoutMs: 30_000 }), session.endpoint);
}

export async function cleanHost(session: SshSession, paths: readonly string[]): Promise<void> {
  const result = await session.runScript(CLEANUP, paths, { timeoutMs: 60_000 });
  if (result.exitCode !== 0) {
    throw new Error(`cleanup failed (exit ${String(result.exitCode)}): ${(result.stderr || result.stdout).trim().slice(-300)}`);
  }
}
