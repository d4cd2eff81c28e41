import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { type CodedText, message } from '@ccos/shared/messages';
import { summarizeCsr, type CsrSummary } from './csr';
import { isStatus, type KubeClient } from './kube-client';

/** Reason and message written into the condition, and cancellation. */
export interface CsrDecisionOptions {
  /** CamelCase reason of the condition. Default `CcosScalerApprove` / `CcosScalerDeny`. */
  reason?: string;
  /** Human-readable message of the condition. */
  message?: string;
  signal?: AbortSignal;
}

/** Outcome of an approval or denial. */
export type CsrDecisionResult =
  | { ok: true; /** False when the CSR already carried this decision. */ changed: boolean; csr: CsrSummary }
  | { ok: false; reason: string; /** `reason` by its code; the API server's own answer is its data. */ coded: CodedText };

function refused(text: CodedText): CsrDecisionResult {
  return { ok: false, reason: text.message, coded: text };
}

/** How many times a decision is retried after a conflicting write (kubectl: 10). */
const CONFLICT_RETRIES = 10;

async function decide(client: KubeClient, name: string, decision: 'Approved' | 'Denied', options: CsrDecisionOptions): Promise<CsrDecisionResult> {
  const opposite = decision === 'Approved' ? 'Denied' : 'Approved';
  const verb = decision === 'Approved' ? 'approve' : 'deny';
  const reason = options.reason ?? (decision === 'Approved' ? 'CcosScalerApprove' : 'CcosScalerDeny');
  const conditionMessage = options.message ?? `This CSR was ${decision.toLowerCase()} by ccos-scaler.`;
  for (let attempt = 0; ; attempt++) {
    let csr: V1CertificateSigningRequest;
    try {
      csr = await client.call(`read certificatesigningrequest ${name}`, (callOptions) => client.certificates.readCertificateSigningRequest({ name }, callOptions), options.signal);
    } catch (error) {
      if (isStatus(error, 404)) {
        return refused(message('csr.notFoundInCluster', { name }));
      }
      throw error;
    }
    const conditions = csr.status?.conditions ?? [];
    if (conditions.some((condition) => condition.type === opposite)) {
      return refused(message('csr.alreadyOpposite', { name, state: opposite }));
    }
    if (conditions.some((condition) => condition.type === decision)) {
      return { ok: true, changed: false, csr: await summarizeCsr(csr) };
    }
    const body: V1CertificateSigningRequest = {
      ...csr,
      status: { ...csr.status, conditions: [...conditions, { type: decision, status: 'True', reason, message: conditionMessage, lastUpdateTime: new Date() }] },
    };
    try {
      const updated = await client.call(
        `${verb} certificatesigningrequest ${name}`,
        (callOptions) => client.certificates.replaceCertificateSigningRequestApproval({ name, body }, callOptions),
        options.signal,
      );
      return { ok: true, changed: true, csr: await summarizeCsr(updated) };
    } catch (error) {
      // Someone else wrote the CSR since we read it (the signer, another approver): read it again.
      if (isStatus(error, 409) && attempt < CONFLICT_RETRIES) {
        continue;
      }
      if (isStatus(error, 404)) {
        return refused(message('csr.notFoundInCluster', { name }));
      }
      if (isStatus(error, 422)) {
        return refused(message('csr.apiRefused', { name, error: error.status?.message ?? error.message }));
      }
      throw error;
    }
  }
}

/**
 * Approves a CSR the way `kubectl certificate approve` does: read it, refuse if it is Denied,
 * append an `Approved` condition (status "True", reason, message, lastUpdateTime) and write it
 * through the `/approval` subresource with the read resourceVersion, re-reading on 409 Conflict.
 * Approving an approved CSR changes nothing. Throws KubeApiError only for infrastructure failures.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#approval-rejection-api-client
 * @see https://github.com/kubernetes/kubectl/blob/master/pkg/cmd/certificates/certificates.go
 */
export function approveCsr(client: KubeClient, name: string, options: CsrDecisionOptions = {}): Promise<CsrDecisionResult> {
  return decide(client, name, 'Approved', options);
}

/**
 * Denies a CSR (`kubectl certificate deny`): like {@link approveCsr} with a `Denied` condition;
 * refuses if the CSR is already Approved.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#approval-rejection-api-client
 */
export function denyCsr(client: KubeClient, name: string, options: CsrDecisionOptions = {}): Promise<CsrDecisionResult> {
  return decide(client, name, 'Denied', options);
}
