import { registerEnumType } from 'type-graphql';
import { CSR_POLICY_DECISIONS, CSR_STATES } from '@ccos/shared/domain';
import type { CsrDecisionKind } from '@ccos/api/data-access-db';

/** Turns a list of names into the object form type-graphql registers as an enum. */
function enumOf<const T extends readonly string[]>(values: T): { [K in T[number]]: K } {
  return Object.fromEntries(values.map((value) => [value, value])) as { [K in T[number]]: K };
}

export const CSR_DECISION_KINDS: readonly CsrDecisionKind[] = ['APPROVED', 'DENIED', 'LEFT_PENDING'];

export const CsrStatusEnum = enumOf(CSR_STATES);
export const CsrPolicyDecisionEnum = enumOf(CSR_POLICY_DECISIONS);
export const CsrDecisionKindEnum = enumOf(['APPROVED', 'DENIED', 'LEFT_PENDING'] as const);
export const KubeletCsrKindEnum = enumOf(['CLIENT', 'SERVING'] as const);
export const CsrChangeKindEnum = enumOf(['ADDED', 'MODIFIED', 'DELETED'] as const);

registerEnumType(CsrStatusEnum, {
  name: 'CsrStatus',
  description: 'PENDING (no decision yet), APPROVED (approved, issued or about to be), DENIED, or FAILED (the signer refused it).',
});
registerEnumType(CsrPolicyDecisionEnum, {
  name: 'CsrPolicyDecision',
  description: 'What the auto-approve policy does with a CSR: APPROVE, LEAVE_PENDING for an operator, or DENY_SUPERSEDED (an older duplicate).',
});
registerEnumType(CsrDecisionKindEnum, { name: 'CsrDecisionKind', description: 'A recorded decision: APPROVED, DENIED, or LEFT_PENDING by the auto-approver.' });
registerEnumType(KubeletCsrKindEnum, { name: 'KubeletCsrKind', description: 'CLIENT (kube-apiserver-client-kubelet) or SERVING (kubelet-serving).' });
registerEnumType(CsrChangeKindEnum, { name: 'CsrChangeKind' });
