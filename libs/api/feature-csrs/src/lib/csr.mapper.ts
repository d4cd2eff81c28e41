import type { CsrDecisionEntity, InventoryNode } from '@ccos/api/data-access-db';
import type { CsrSummary } from '@ccos/api/data-access-kube';
import { CSR_CHECK_OVERRIDES, type CsrCheckName, type CsrVerdict, isImpostor } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';
import { deciderOfCondition } from './csr-decision.log';
import type { CsrDecisionType } from './csr-decision.type';
import { commonNamesOf, policyState } from './csr-facts';
import type { CsrVerdictType } from './csr-verdict.type';
import type { CsrType } from './csr.type';

/** The GraphQL view of a CSR: what it claims, how it was decided and by whom, and the policy's verdict. */
export function toCsrType(
  clusterId: string,
  csr: CsrSummary,
  verdict: CsrVerdict,
  decisions: readonly CsrDecisionEntity[],
  inventory: readonly InventoryNode[],
  now: Date,
): CsrType {
  const status = policyState(csr);
  const request = csr.request.ok ? csr.request.request : null;
  const createdAt = csr.createdAt ? new Date(csr.createdAt) : null;
  const node = verdict.node === null ? undefined : inventory.find((entry) => entry.hostname === verdict.node);
  const { decidedBy, statusReason, statusReasonCoded } = explainStatus(csr, decisions);
  return {
    clusterId,
    name: csr.name,
    signerName: csr.signerName,
    requester: { username: csr.username ?? '', groups: csr.groups },
    usages: csr.usages,
    subject: request ? { text: request.subject, commonNames: commonNamesOf(request), organizations: request.organizations } : null,
    sans: request
      ? { dnsNames: request.dnsNames, ipAddresses: request.ipAddresses, emailAddresses: request.emailAddresses, uris: request.uris, otherNames: request.otherNames }
      : null,
    key: request
      ? { ...request.publicKey, signatureAlgorithm: request.signatureAlgorithm, signatureValid: request.signatureValid }
      : null,
    parseError: csr.request.ok ? null : csr.request.error,
    createdAt,
    ageSeconds: createdAt ? Math.max(0, Math.floor((now.getTime() - createdAt.getTime()) / 1000)) : null,
    status,
    issued: csr.state === 'Issued',
    certificate: csr.certificate
      ? {
          serialNumber: csr.certificate.serialNumber,
          dnsNames: csr.certificate.dnsNames,
          ipAddresses: csr.certificate.ipAddresses,
          notBefore: new Date(csr.certificate.notBefore),
          notAfter: new Date(csr.certificate.notAfter),
        }
      : null,
    decidedBy,
    statusReason,
    statusReasonCode: statusReasonCoded?.code ?? null,
    statusReasonParams: statusReasonCoded ? { ...statusReasonCoded.params } : null,
    decisions: decisions.map(toDecisionType),
    node: node ? { id: node.id, hostname: node.hostname } : null,
    impostor: isImpostor(verdict),
    verdict: toCsrVerdictType(csr.name, verdict),
  };
}

export function toCsrVerdictType(csrName: string, verdict: CsrVerdict): CsrVerdictType {
  return {
    csrName,
    decision: verdict.decision,
    kind: verdict.kind,
    path: verdict.path,
    node: verdict.node,
    reason: verdict.reason,
    reasonCode: verdict.reasonCode,
    reasonParams: verdict.reasonParams,
    checks: verdict.checks.map(({ name, passed, detail, detailCode, detailParams, overridable }) => ({ name, passed, detail, detailCode, detailParams, overridable })),
  };
}

export function toDecisionType(decision: CsrDecisionEntity): CsrDecisionType {
  return {
    decision: decision.decision,
    actor: decision.actor,
    reason: decision.reason,
    reasonCode: decision.reasonCoded?.code ?? null,
    reasonParams: decision.reasonCoded ? { ...decision.reasonCoded.params } : null,
    forced: decision.forced,
    forceReason: decision.forceReason,
    // Records from before the rule was declared say nothing; the declaration answers for them.
    checks: decision.checks.map((check) => ({ ...check, detailCode: check.detailCode ?? null, detailParams: (check.detailParams as Record<string, unknown> | undefined) ?? null, overridable: check.overridable ?? CSR_CHECK_OVERRIDES[check.name as CsrCheckName] === 'FORCE' })),
    decidedAt: decision.decidedAt,
  };
}

/**
 * Who decided and why: our own record when this service decided, else the condition the
 * deciding client wrote (kubectl, another approver, the signer for FAILED).
 */
function explainStatus(csr: CsrSummary, decisions: readonly CsrDecisionEntity[]): { decidedBy: string | null; statusReason: string | null; statusReasonCoded?: Message | null } {
  const latest = (kind: CsrDecisionEntity['decision']): CsrDecisionEntity | undefined => [...decisions].reverse().find((decision) => decision.decision === kind);
  const condition = (type: string) => csr.conditions.find((entry) => entry.type === type && entry.status === 'True');
  switch (policyState(csr)) {
    case 'PENDING': {
      const left = latest('LEFT_PENDING');
      return { decidedBy: left?.actor ?? null, statusReason: left?.reason ?? null, statusReasonCoded: left?.reasonCoded };
    }
    case 'APPROVED': {
      const ours = latest('APPROVED');
      const approved = condition('Approved');
      return ours
        ? { decidedBy: ours.actor, statusReason: ours.reason, statusReasonCoded: ours.reasonCoded }
        : { decidedBy: deciderOfCondition(approved?.reason, 'unknown'), statusReason: approved?.message ?? null };
    }
    case 'DENIED': {
      const ours = latest('DENIED');
      const denied = condition('Denied');
      return ours ? { decidedBy: ours.actor, statusReason: ours.reason, statusReasonCoded: ours.reasonCoded } : { decidedBy: deciderOfCondition(denied?.reason, 'unknown'), statusReason: denied?.message ?? null };
    }
    case 'FAILED': {
      const failed = condition('Failed');
      return { decidedBy: failed?.reason ?? 'signer', statusReason: failed?.message ?? null };
    }
  }
}
