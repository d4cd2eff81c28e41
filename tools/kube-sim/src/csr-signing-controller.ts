import type { CertificateAuthority } from './certificate-authority';
import type { KubeSimClock } from './clock';
import { cloneJson, type JsonObject } from './json-value';
import { kubeTime, type KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import { csrConditions, hasCondition, requestPem } from './resources/certificate-signing-requests';
import { parseCertificateRequest, signCertificateRequest, signerValidationError, SUPPORTED_SIGNERS } from './signer';
import type { ObjectStore, StoreEvent } from './store';

function needsSigning(csr: KubeObject): boolean {
  const signer = csr.spec?.['signerName'];
  return (
    typeof signer === 'string' &&
    (SUPPORTED_SIGNERS as readonly string[]).includes(signer) &&
    hasCondition(csr, 'Approved') &&
    !hasCondition(csr, 'Denied') &&
    !hasCondition(csr, 'Failed') &&
    !csr.status?.['certificate']
  );
}

/**
 * kube-controller-manager's csrsigning controller for the built-in kubelet and client signers: every
 * approved, not denied or failed CSR gets `status.certificate` from the simulator's CA, or a Failed
 * condition (reason SignerValidationFailure) when the request breaks its signer's rules.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#signer-control-plane
 */
export class CsrSigningController {
  private readonly unsubscribe: () => void;
  private readonly inFlight = new Set<string>();
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly ca: CertificateAuthority,
    private readonly clock: KubeSimClock,
  ) {
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource.group !== 'certificates.k8s.io' || event.type === 'DELETED' || !needsSigning(event.object)) {
      return;
    }
    const uid = event.object.metadata.uid ?? '';
    if (this.inFlight.has(uid)) {
      return;
    }
    this.inFlight.add(uid);
    // Off the writer's path, as the controller's work queue is: the approval is answered and watched before its signing starts.
    const work = new Promise<void>((resolve) => setImmediate(resolve)).then(() => (this.stopped ? undefined : this.sign(event.resource, event.object))).finally(() => {
      this.inFlight.delete(uid);
      this.pending.delete(work);
    });
    this.pending.add(work);
  }

  private async sign(def: ResourceDefinition, csr: KubeObject): Promise<void> {
    const usages = (Array.isArray(csr.spec?.['usages']) ? csr.spec['usages'] : []).map(String);
    const signer = String(csr.spec?.['signerName']);
    let certificate: string | undefined;
    let failure: string | undefined;
    try {
      const request = parseCertificateRequest(requestPem(csr));
      failure = signerValidationError(signer, request, usages);
      if (!failure) {
        const expiration = csr.spec?.['expirationSeconds'];
        certificate = await signCertificateRequest(this.ca, request, usages, typeof expiration === 'number' ? expiration : undefined);
      }
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    if (this.stopped) {
      return;
    }
    const latest = this.store.get(def, undefined, csr.metadata.name ?? '');
    if (!latest || latest.metadata.uid !== csr.metadata.uid || !needsSigning(latest)) {
      return;
    }
    const updated = cloneJson(latest);
    const status: JsonObject = { ...(updated.status ?? {}) };
    if (certificate) {
      status['certificate'] = Buffer.from(certificate, 'utf8').toString('base64');
    } else {
      const now = kubeTime(this.clock.now());
      status['conditions'] = [
        ...csrConditions(updated),
        { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: failure ?? 'signing failed', lastUpdateTime: now, lastTransitionTime: now },
      ];
    }
    updated.status = status;
    this.store.replace(def, updated);
  }

  /** Resolves once every signing in progress has been written. */
  async idle(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
  }
}
