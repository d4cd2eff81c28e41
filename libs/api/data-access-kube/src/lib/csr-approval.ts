import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { type CodedText, message } from '@ccos/shared/messages';
import { CsrRequestCache, summarizeCsr, type CsrSummary } from './csr';
import { isStatus, type KubeClient } from './kube-client';

/** Reason and message written into the condition, and cancellation. */
export interface CsrDecisionOptions {
  /** CamelCase reason of the condition. Default `CcosScalerApprove` / `CcosScalerDeny`. */
  reason?: string;
  /** Human-readable message of the condition. */
  message?: string;
  signal?: AbortSignal;
  /**
   * The CSR as the caller's watch has it. When it is pending without any condition and carries no
   * labels, annotations, finalizers or owners, the decision is written at its resourceVersion
   * without reading the CSR first (one request, not two: the API server's approval strategy keeps
   * the stored spec and status but the metadata given, which is then the stored one anyway); a 409
   * Conflict means it changed since, and it is read again as without.
   */
  known?: CsrSummary;
  /** Requests already parsed (the cluster's CSR watch keeps them): the answer is summarised without checking the request's signature again. */
  requests?: CsrRequestCache;
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
  const requests = options.requests ?? new CsrRequestCache();
  const reason = options.reason ?? (decision === 'Approved' ? 'CcosScalerApprove' : 'CcosScalerDeny');
  const conditionMessage = options.message ?? `This CSR was ${decision.toLowerCase()} by ccos-scaler.`;
  const condition = { type: decision, status: 'True', reason, message: conditionMessage };
  const known = options.known;
  for (let attempt = 0; ; attempt++) {
    let csr: V1CertificateSigningRequest;
    try {
      csr = attempt === 0 && known?.name === name && known.plainMetadata && known.state === 'Pending' && known.conditions.length === 0 && known.resourceVersion !== ''
        ? ({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name, uid: known.uid, resourceVersion: known.resourceVersion }, status: {} } as V1CertificateSigningRequest)
        : await client.call(`read certificatesigningrequest ${name}`, (callOptions) => client.certificates.readCertificateSigningRequest({ name }, callOptions), options.signal);
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
      return { ok: true, changed: false, csr: await summarizeCsr(csr, requests) };
    }
    const body: V1CertificateSigningRequest = {
      ...csr,
      status: { ...csr.status, conditions: [...conditions, { ...condition, lastUpdateTime: new Date() }] },
    };
    try {
      const updated = await client.call(
        `${verb} certificatesigningrequest ${name}`,
        (callOptions) => client.certificates.replaceCertificateSigningRequestApproval({ name, body }, callOptions),
        options.signal,
      );
      return { ok: true, changed: true, csr: await summarizeCsr(updated, requests) };
    } catch (error) {
      // Someone else wrote the CSR since we (or the watch) read it (the signer, another approver): read it again.
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
 * Approves a CSR the way `kubectl certificate approve` does: read it (unless `known` says it is
 * pending and untouched), refuse if it is Denied,
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
