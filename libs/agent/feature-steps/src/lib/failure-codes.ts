import type { InstallStep } from '@ccos/shared/domain';

/**
 * Known failure codes (`detail.code` of a FAILED event). Vague failures are
 * turned into one of these (see {@link diagnose}) so the console can show a
 * precise next step and the service can count them.
 */
export const FAILURE_CODES = [
  'PREFLIGHT_FAILED',
  'INVALID_INPUT',
  'INTERNAL_ERROR',
  'CANCELLED',
  'TERMINATED',
  'SERVICE_UNREACHABLE',
  'SERVICE_CERT_REFUSED',
  'MANIFEST_INVALID',
  'MANIFEST_MISMATCH',
  'ARTIFACT_MISSING',
  'ARTIFACT_NOT_FOUND',
  'DOWNLOAD_REFUSED',
  'CHECKSUM_MISMATCH',
  'NETWORK_UNREACHABLE',
  'DISK_FULL',
  'DISK_WRITE_FAILED',
  'PERMISSION_DENIED',
  'PACKAGE_TOOL_MISSING',
  'RPM_MISSING_DEPENDENCY',
  'RPM_CONFLICT',
  'RPM_CORRUPT',
  'RPM_DB_LOCKED',
  'PACKAGE_INSTALL_FAILED',
  'UNIT_REJECTED',
  'SYSTEMCTL_FAILED',
  'MCS_UNREACHABLE',
  'MCS_TLS_VERIFY_FAILED',
  'MCS_HTTP_ERROR',
  'MCS_NOT_ACCEPTABLE',
  'IGNITION_NOT_IGNITION',
  'IGNITION_UNSUPPORTED',
  'IGNITION_APPLY_FAILED',
  'INVALID_NODE_LABELS',
  'KUBELET_START_FAILED',
  'KUBELET_DIED',
  'KUBELET_SWAP_ON',
  'KUBELET_BOOTSTRAP_KUBECONFIG',
  'KUBELET_INVALID_FLAGS',
  'KUBELET_UNAUTHORIZED',
  'KUBELET_API_UNREACHABLE',
  'CERT_EXPIRED',
  'NODE_READY_TIMEOUT',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

interface Pattern {
  readonly code: FailureCode;
  readonly pattern: RegExp;
  /** Only for output of these steps (all when absent). */
  readonly steps?: readonly InstallStep[];
  readonly hint: string;
}

const KUBELET_STEPS: readonly InstallStep[] = ['START_KUBELET'];

/**
 * Output patterns, most specific first. The kubelet hints follow the seed
 * guide's troubleshooting table (NotReady → `journalctl -u kubelet`, check
 * kubelet ↔ API; expired certificates → check expiry).
 */
const PATTERNS: readonly Pattern[] = [
  {
    code: 'KUBELET_SWAP_ON', steps: KUBELET_STEPS, pattern: /running with swap on is not supported|please disable swap/i,
    hint: 'Turn swap off (`swapoff -a`) and remove the swap entry from /etc/fstab, then retry: kubelet refuses to run with swap on.',
  },
  {
    code: 'KUBELET_BOOTSTRAP_KUBECONFIG', steps: KUBELET_STEPS, pattern: /unable to load bootstrap kubeconfig|invalid kubeconfig|bootstrap-kubeconfig.*no such file/i,
    hint: 'The bootstrap kubeconfig (/etc/kubernetes/kubeconfig) is missing or broken: retry from APPLY_IGNITION so the machine config server\'s files are written again.',
  },
  {
    code: 'KUBELET_INVALID_FLAGS', steps: KUBELET_STEPS, pattern: /Failed to validate kubelet flags|unknown 'kubernetes\.io' or 'k8s\.io' labels|invalid taint spec|unknown flag/i,
    hint: 'kubelet rejected its flags: check the node\'s labels and taints (/etc/sysconfig/kubelet); labels in the kubernetes.io namespace must use an allowed prefix such as node-role.kubernetes.io/.',
  },
  {
    code: 'CERT_EXPIRED', pattern: /certificate has expired|certificate is not yet valid|x509: certificate has expired or is not yet valid/i,
    hint: 'A certificate is outside its validity period: check the host clock (`timedatectl`), then the certificates (`openssl x509 -noout -dates -in <file>`, on the masters `kubeadm certs check-expiration`).',
  },
  {
    code: 'KUBELET_UNAUTHORIZED', steps: KUBELET_STEPS, pattern: /\bUnauthorized\b|status code 401|the server has asked for the client to provide credentials/i,
    hint: 'The API server refused kubelet\'s bootstrap credentials: the bootstrap token in /etc/kubernetes/kubeconfig may have expired; retry from APPLY_IGNITION to fetch a fresh one.',
  },
  {
    code: 'KUBELET_API_UNREACHABLE', steps: KUBELET_STEPS, pattern: /connection refused|no route to host|i\/o timeout|dial tcp|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH/i,
    hint: 'kubelet cannot reach the API server behind the VIP: check `nc -zv <VIP> 6443` from the host and the firewall/load balancer (seed troubleshooting: NotReady → `journalctl -u kubelet -f`, check kubelet ↔ API).',
  },
  {
    code: 'RPM_MISSING_DEPENDENCY', pattern: /nothing provides|Failed dependencies|requires .* but none of the providers/i,
    hint: 'A package needs something that is neither installed nor in the artifact set: add the missing rpm to the installer service\'s artifacts or install it from the host\'s repositories.',
  },
  {
    code: 'RPM_CONFLICT', pattern: /conflicts with|file .* from install of .* conflicts/i,
    hint: 'An installed package conflicts with the artifact set: remove or upgrade it on the host (`rpm -qa | grep <name>`), then retry.',
  },
  {
    code: 'RPM_CORRUPT', pattern: /Can not load RPM file|not an rpm package|is not an RPM|header V\d .* BAD|digest.*MISMATCH/i,
    hint: 'An rpm file is damaged: delete the run\'s rpms folder on the host and retry so it is downloaded again.',
  },
  {
    code: 'RPM_DB_LOCKED', pattern: /Waiting for process with pid|is currently holding the (yum|dnf) lock|can't create transaction lock|rpmdb.*lock/i,
    hint: 'Another package manager holds the lock: wait for it to finish (`ps aux | grep -E "dnf|yum|rpm"`), then retry.',
  },
  {
    code: 'DISK_FULL', pattern: /No space left on device|ENOSPC|Disk quota exceeded|EDQUOT/i,
    hint: 'The disk is full: free space (`df -h /usr/local /opt /var`), then retry.',
  },
  {
    code: 'PERMISSION_DENIED', pattern: /Permission denied|EACCES|Read-only file system|EROFS|Operation not permitted/i,
    hint: 'The agent must run as root on a writable root filesystem: check how it was started and `mount | grep " / "`.',
  },
  {
    code: 'UNIT_REJECTED', pattern: /Unit .* not found|Failed to enable unit|bad-setting|Invalid argument.*\.service/i,
    hint: 'systemd rejected a unit: run `systemctl daemon-reload` and `systemctl status <unit>` on the host to see why.',
  },
];

export interface Diagnosis {
  readonly code: FailureCode;
  readonly hint: string;
  /** The line that matched, for the message. */
  readonly evidence: string | null;
}

/**
 * Turns command output (or a kubelet journal) into a known failure code
 * and hint. Returns the fallback when nothing known matches; later lines
 * win over earlier ones, as the last error is usually the cause.
 */
export function diagnose(step: InstallStep, text: string, fallback: { code: FailureCode; hint: string }): Diagnosis {
  const lines = text.split('\n').reverse();
  for (const line of lines) {
    for (const entry of PATTERNS) {
      if ((entry.steps === undefined || entry.steps.includes(step)) && entry.pattern.test(line)) {
        return { code: entry.code, hint: entry.hint, evidence: line.trim().slice(0, 300) };
      }
    }
  }
  return { ...fallback, evidence: null };
}
