import { registerEnumType } from 'type-graphql';
import type { CsrDecisionKind } from '@ccos/api/data-access-db';
import { enumOf } from '@ccos/api/util-graphql';
import { CSR_POLICY_DECISIONS, CSR_POLICY_PATHS, CSR_STATES } from '@ccos/shared/domain';

export const CsrStatusEnum = enumOf(CSR_STATES);
export const CsrPolicyDecisionEnum = enumOf(CSR_POLICY_DECISIONS);
export const CsrPolicyPathEnum = enumOf(CSR_POLICY_PATHS);
export const CsrDecisionKindEnum = enumOf(['APPROVED', 'DENIED', 'LEFT_PENDING'] as const satisfies readonly CsrDecisionKind[]);
export const KubeletCsrKindEnum = enumOf(['CLIENT', 'SERVING'] as const);
export const CsrChangeKindEnum = enumOf(['ADDED', 'MODIFIED', 'DELETED'] as const);

registerEnumType(CsrStatusEnum, {
  name: 'CsrStatus',
  description: 'PENDING (no decision yet), APPROVED (approved, issued or about to be), DENIED, or FAILED (the signer refused it).',
});
registerEnumType(CsrPolicyDecisionEnum, {
  name: 'CsrPolicyDecision',
  description:
    'What the auto-approve policy does with a CSR: APPROVE, LEAVE_PENDING for an operator, DENY_SUPERSEDED (an older duplicate), or DENY_IMPOSTOR (a client CSR for a node this service installs, filed by anyone but its install run\'s identity or the node itself), or LEAVE_TO_CLUSTER (a node renewing its own client certificate, which the cluster approves itself through selfnodeclient).',
});
registerEnumType(CsrDecisionKindEnum, { name: 'CsrDecisionKind', description: 'A recorded decision: APPROVED, DENIED, or LEFT_PENDING by the auto-approver.' });
registerEnumType(KubeletCsrKindEnum, { name: 'KubeletCsrKind', description: 'CLIENT (kube-apiserver-client-kubelet) or SERVING (kubelet-serving).' });
registerEnumType(CsrChangeKindEnum, { name: 'CsrChangeKind' });
registerEnumType(CsrPolicyPathEnum, { name: 'CsrPolicyPath', description: 'JOIN: a node being installed (its first client and serving certificates). RENEWAL: a serving certificate of a node this service joined.' });
