import type { ApprovalAction } from '@ccos/shared/domain';

/** An action as its requester asked for it, before it runs. */
export interface AskedAction {
  readonly clusterId: string;
  readonly action: ApprovalAction;
  /** What it acts on, as people name it (a host name, a CSR name). */
  readonly target: string;
  /** The arguments it runs with once approved. */
  readonly params: Record<string, unknown>;
  /** What it would do, for the approver; read only when the action is held. */
  readonly preview?: () => Promise<Record<string, unknown> | null>;
  readonly actor: string;
}

/**
 * Four-eyes: returns when the action may run now; on a cluster that requires a second person,
 * holds it as an approval request and throws FAILED_PRECONDITION naming the request.
 */
export interface ApprovalGate {
  gate(asked: AskedAction): Promise<void>;
}

/** No cluster requires a second person (tests and tools that run without the approvals feature). */
export const NO_APPROVAL_GATE: ApprovalGate = { gate: async () => undefined };
