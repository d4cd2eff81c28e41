/**
 * Every code an install run can fail with is in this file: the agent's (`AGENT_FAILURE_CODES`) and
 * the service's own (`SERVICE_FAILURE_CODES`).
 *
 * The agent's known failure codes (`detail.code` of a FAILED event). Vague failures are
 * turned into one of these (the agent's `diagnose`) so the console can show a
 * precise next step and the service can count them: its metrics label a failed run
 * with one of these and nothing else the agent sends.
 */
export const AGENT_FAILURE_CODES = [
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
export type AgentFailureCode = (typeof AGENT_FAILURE_CODES)[number];

/** Failure codes of runs the service ended itself (`none` for a run that did not fail, `UNKNOWN` for an agent's code that is not one of its known ones). */
export const SERVICE_FAILURE_CODES = {
  agentNotStarted: 'AGENT_NOT_STARTED',
  deadline: 'RUN_DEADLINE',
  superseded: 'SUPERSEDED',
  cancelled: 'CANCELLED',
  none: 'none',
  unknown: 'UNKNOWN',
} as const;
export type ServiceFailureCode = (typeof SERVICE_FAILURE_CODES)[keyof typeof SERVICE_FAILURE_CODES];

