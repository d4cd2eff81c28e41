import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { parseCertificateRequest, type CertificateRequestParse } from './csr-request';
import { listAll, startInformer, type InformerOptions, type WatchEventType } from './informer';
import { type IssuedCertificate, parseIssuedCertificate } from './issued-certificate';
import type { KubeClient } from './kube-client';
import { isoTime } from './node-inventory';

/** The user extra in which kube-apiserver names the credential a request was made with. */
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/** Where a CSR stands: waiting for a decision, approved (not yet signed), issued, denied, or failed signing. */
export type CsrState = 'Pending' | 'Approved' | 'Issued' | 'Denied' | 'Failed';

/** A condition of a CSR's status. */
export interface CsrCondition {
  type: string;
  status: string;
  reason: string | null;
  message: string | null;
  lastUpdateTime: string | null;
}

/** What the product needs to know about a CertificateSigningRequest. */
export interface CsrSummary {
  name: string;
  uid: string;
  resourceVersion: string;
  /**
   * No labels, annotations, finalizers or owners (a kubelet's CSR has none): a decision may then
   * be written from this summary alone, since the `/approval` subresource writes the metadata it is
   * given as well as the conditions.
   */
  plainMetadata: boolean;
  createdAt: string | null;
  signerName: string;
  /** Who created it, as the API server authenticated them (never taken from the request body). */
  username: string | null;
  /** `spec.uid` of the requester (a ServiceAccount's UID tells a re-created account from the original). */
  requesterUid: string | null;
  /**
   * The credential the requester authenticated with, when the API server says
   * (`spec.extra["authentication.kubernetes.io/credential-id"]`; for a client certificate
   * `X509SHA256=<hex fingerprint>`, Kubernetes 1.31 and later); null otherwise.
   */
  credentialId: string | null;
  groups: string[];
  usages: string[];
  expirationSeconds: number | null;
  state: CsrState;
  conditions: CsrCondition[];
  /** The parsed `spec.request`, or why it could not be parsed. */
  request: CertificateRequestParse;
  /** The issued certificate (`status.certificate`), parsed; null before it is issued or when unreadable. */
  certificate: IssuedCertificate | null;
}

/** A change of a CSR. */
export interface CsrEvent {
  type: WatchEventType;
  csr: CsrSummary;
}

/** A running CSR watch. */
export interface CsrWatch {
  /** Resolves once the initial list has been reported (parsed) as ADDED events. */
  readonly synced: Promise<void>;
  csrs(): CsrSummary[];
  csr(name: string): CsrSummary | undefined;
  /** Cuts the informer's wait after a failure short. */
  retryNow(): void;
  stop(): Promise<void>;
}

function hasCondition(csr: V1CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((condition) => condition.type === type && condition.status === 'True');
}

/**
 * The state kubectl's CONDITION column shows, reduced to one value.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#request-signing-process
 */
export function csrState(csr: V1CertificateSigningRequest): CsrState {
  if (hasCondition(csr, 'Denied')) {
    return 'Denied';
  }
  if (hasCondition(csr, 'Failed')) {
    return 'Failed';
  }
  if (hasCondition(csr, 'Approved')) {
    return csr.status?.certificate ? 'Issued' : 'Approved';
  }
  return 'Pending';
}

/** Parses requests once per CSR UID: `spec.request` is immutable. */
export class CsrRequestCache {
  private readonly parsed = new Map<string, Promise<CertificateRequestParse>>();
  /** `status.certificate` is set once; kept per UID with the text it was parsed from. */
  private readonly certificates = new Map<string, { text: string; certificate: IssuedCertificate | null }>();

  certificateOf(csr: V1CertificateSigningRequest): IssuedCertificate | null {
    const text = csr.status?.certificate ?? '';
    const uid = csr.metadata?.uid ?? '';
    const known = uid ? this.certificates.get(uid) : undefined;
    if (known && known.text === text) {
      return known.certificate;
    }
    const certificate = parseIssuedCertificate(text);
    if (uid) {
      this.certificates.set(uid, { text, certificate });
    }
    return certificate;
  }

  get(csr: V1CertificateSigningRequest): Promise<CertificateRequestParse> {
    const uid = csr.metadata?.uid ?? '';
    let result = uid ? this.parsed.get(uid) : undefined;
    if (!result) {
      result = csr.spec?.request ? parseCertificateRequest(csr.spec.request) : Promise.resolve({ ok: false, error: 'the CSR has no spec.request' });
      if (uid) {
        this.parsed.set(uid, result);
      }
    }
    return result;
  }

  forget(uid: string): void {
    this.parsed.delete(uid);
    this.certificates.delete(uid);
  }
}

function isEmpty(value: object | undefined): boolean {
  return value === undefined || Object.keys(value).length === 0;
}

/**
 * Summarises a CSR, parsing its PKCS#10 request.
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/certificate-signing-request-v1/
 */
export async function summarizeCsr(csr: V1CertificateSigningRequest, cache: CsrRequestCache = new CsrRequestCache()): Promise<CsrSummary> {
  const request = await cache.get(csr);
  return {
    name: csr.metadata?.name ?? '',
    uid: csr.metadata?.uid ?? '',
    resourceVersion: csr.metadata?.resourceVersion ?? '',
    plainMetadata: isEmpty(csr.metadata?.labels) && isEmpty(csr.metadata?.annotations) && isEmpty(csr.metadata?.finalizers) && isEmpty(csr.metadata?.ownerReferences),
    createdAt: isoTime(csr.metadata?.creationTimestamp),
    signerName: csr.spec?.signerName ?? '',
    username: csr.spec?.username ?? null,
    requesterUid: csr.spec?.uid ?? null,
    credentialId: csr.spec?.extra?.[CREDENTIAL_ID_KEY]?.[0] ?? null,
    groups: csr.spec?.groups ?? [],
    usages: csr.spec?.usages ?? [],
    expirationSeconds: csr.spec?.expirationSeconds ?? null,
    state: csrState(csr),
    conditions: (csr.status?.conditions ?? []).map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason ?? null,
      message: condition.message ?? null,
      lastUpdateTime: isoTime(condition.lastUpdateTime),
    })),
    request,
    certificate: cache.certificateOf(csr),
  };
}

/**
 * Lists every CertificateSigningRequest (paged), parsed.
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/certificate-signing-request-v1/#list-list-or-watch-objects-of-kind-certificatesigningrequest
 */
export async function listCsrs(client: KubeClient, signal?: AbortSignal): Promise<CsrSummary[]> {
  const { items } = await listAll(client, 'list certificatesigningrequests', (page, options) => client.certificates.listCertificateSigningRequest(page, options), signal);
  const cache = new CsrRequestCache();
  return Promise.all(items.map((csr) => summarizeCsr(csr, cache)));
}

/**
 * Watches CertificateSigningRequests informer-style (list, watch from the list's resourceVersion,
 * list again on 410 Gone, reconnect with backoff) and reports each change with the request parsed.
 * Events keep the API's order. A request that cannot be parsed is reported as such, never thrown.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 */
export function watchCsrs(client: KubeClient, onEvent: (event: CsrEvent) => void, options: InformerOptions = {}, cache = new CsrRequestCache()): CsrWatch {
  const current = new Map<string, CsrSummary>();
  let queue: Promise<void> = Promise.resolve();
  const informer = startInformer<V1CertificateSigningRequest>(
    client,
    {
      path: '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      description: 'list certificatesigningrequests',
      list: (page, callOptions) => client.certificates.listCertificateSigningRequest(page, callOptions),
    },
    ({ type, object }) => {
      // Parsing is asynchronous (signature check); the chain keeps events in order.
      queue = queue.then(async () => {
        const csr = await summarizeCsr(object, cache);
        if (type === 'DELETED') {
          current.delete(csr.name);
          cache.forget(csr.uid);
        } else {
          current.set(csr.name, csr);
        }
        try {
          onEvent({ type, csr });
        } catch (error) {
          options.onError?.(error instanceof Error ? error : new Error(String(error)), 0);
        }
      });
    },
    options,
  );
  return {
    synced: informer.synced.then(() => queue),
    csrs: () => [...current.values()].sort((a, b) => a.name.localeCompare(b.name)),
    csr: (name) => current.get(name),
    retryNow: () => informer.retryNow(),
    async stop() {
      await informer.stop();
      await queue;
    },
  };
}
