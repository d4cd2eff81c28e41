import type { AgentFailureCode as FailureCode, InstallStep } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';

export { AGENT_FAILURE_CODES as FAILURE_CODES, type AgentFailureCode as FailureCode } from '@ccos/shared/domain';

interface Pattern {
  readonly code: FailureCode;
  readonly pattern: RegExp;
  /** Only for output of these steps (all when absent). */
  readonly steps?: readonly InstallStep[];
  readonly hint: CodedText;
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
    hint: message('agent.diagnosis.KUBELET_SWAP_ON.hint'),
  },
  {
    code: 'KUBELET_BOOTSTRAP_KUBECONFIG', steps: KUBELET_STEPS, pattern: /unable to load bootstrap kubeconfig|invalid kubeconfig|bootstrap-kubeconfig.*no such file/i,
    hint: message('agent.diagnosis.KUBELET_BOOTSTRAP_KUBECONFIG.hint'),
  },
  {
    code: 'KUBELET_INVALID_FLAGS', steps: KUBELET_STEPS, pattern: /Failed to validate kubelet flags|unknown 'kubernetes\.io' or 'k8s\.io' labels|invalid taint spec|unknown flag/i,
    hint: message('agent.diagnosis.KUBELET_INVALID_FLAGS.hint'),
  },
  {
    code: 'CERT_EXPIRED', pattern: /certificate has expired|certificate is not yet valid|x509: certificate has expired or is not yet valid/i,
    hint: message('agent.diagnosis.CERT_EXPIRED.hint'),
  },
  {
    code: 'KUBELET_UNAUTHORIZED', steps: KUBELET_STEPS, pattern: /\bUnauthorized\b|status code 401|the server has asked for the client to provide credentials/i,
    hint: message('agent.diagnosis.KUBELET_UNAUTHORIZED.hint'),
  },
  {
    code: 'KUBELET_API_UNREACHABLE', steps: KUBELET_STEPS, pattern: /connection refused|no route to host|i\/o timeout|dial tcp|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH/i,
    hint: message('agent.diagnosis.KUBELET_API_UNREACHABLE.hint'),
  },
  {
    code: 'RPM_MISSING_DEPENDENCY', pattern: /nothing provides|Failed dependencies|requires .* but none of the providers/i,
    hint: message('agent.diagnosis.RPM_MISSING_DEPENDENCY.hint'),
  },
  {
    code: 'RPM_CONFLICT', pattern: /conflicts with|file .* from install of .* conflicts/i,
    hint: message('agent.diagnosis.RPM_CONFLICT.hint'),
  },
  {
    code: 'RPM_CORRUPT', pattern: /Can not load RPM file|not an rpm package|is not an RPM|header V\d .* BAD|digest.*MISMATCH/i,
    hint: message('agent.diagnosis.RPM_CORRUPT.hint'),
  },
  {
    code: 'RPM_DB_LOCKED', pattern: /Waiting for process with pid|is currently holding the (yum|dnf) lock|can't create transaction lock|rpmdb.*lock/i,
    hint: message('agent.diagnosis.RPM_DB_LOCKED.hint'),
  },
  {
    code: 'DISK_FULL', pattern: /No space left on device|ENOSPC|Disk quota exceeded|EDQUOT/i,
    hint: message('agent.diagnosis.DISK_FULL.hint'),
  },
  {
    code: 'PERMISSION_DENIED', pattern: /Permission denied|EACCES|Read-only file system|EROFS|Operation not permitted/i,
    hint: message('agent.diagnosis.PERMISSION_DENIED.hint'),
  },
  {
    code: 'UNIT_REJECTED', pattern: /Unit .* not found|Failed to enable unit|bad-setting|Invalid argument.*\.service/i,
    hint: message('agent.diagnosis.UNIT_REJECTED.hint'),
  },
];

export interface Diagnosis {
  readonly code: FailureCode;
  readonly hint: CodedText;
  /** The line that matched, for the message. */
  readonly evidence: string | null;
}

/**
 * Turns command output (or a kubelet journal) into a known failure code
 * and hint. Returns the fallback when nothing known matches; later lines
 * win over earlier ones, as the last error is usually the cause.
 */
export function diagnose(step: InstallStep, text: string, fallback: { code: FailureCode; hint: CodedText }): Diagnosis {
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
