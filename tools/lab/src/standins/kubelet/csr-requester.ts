import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError, type KubeClient } from '../../kube/kube-client';
import { generateKey, nodeCertificateRequest } from './certificates';
import { error, info, warn } from './klog';

/**
 * Getting a certificate the way kubelet's certificate manager does: create a
 * CertificateSigningRequest (generateName `csr-`), wait for approval and for
 * the signer to fill `status.certificate`; when nothing happens within the
 * wait timeout (real kubelet: 15 min) or the CSR is denied or deleted, back
 * off and try again with a new key and a new CSR.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/
 */
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** What to ask for. */
export interface CertificateWanted {
  readonly signerName: typeof CLIENT_SIGNER | typeof SERVING_SIGNER;
  readonly nodeName: string;
  /** SANs for a serving certificate; null for a client certificate. */
  readonly sans: { readonly dns: readonly string[]; readonly ips: readonly string[] } | null;
  readonly waitTimeoutSeconds: number;
  /** `spec.expirationSeconds`: how long the certificate should be valid (the signer may shorten it). */
  readonly expirationSeconds?: number | null;
}

/** An issued certificate and its key, both PEM. */
export interface IssuedCertificate {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  readonly csrName: string;
}

interface CsrObject {
  metadata?: { name?: string; uid?: string };
  status?: { certificate?: string; conditions?: { type?: string; reason?: string; message?: string }[] };
}

/** Tries until a certificate is issued or `signal` aborts. */
export async function obtainCertificate(client: KubeClient, wanted: CertificateWanted, signal?: AbortSignal): Promise<IssuedCertificate> {
  const source = 'certificate_manager.go:356';
  let backoffSeconds = 2;
  for (;;) {
    signal?.throwIfAborted();
    info(source, `${wanted.signerName}: Rotating certificates`);
    try {
      const key = await generateKey();
      const requestPem = await nodeCertificateRequest(wanted.nodeName, key, wanted.sans);
      const created = await client.post<CsrObject>(CSR_PATH, {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { generateName: 'csr-' },
        spec: {
          request: Buffer.from(requestPem).toString('base64'),
          signerName: wanted.signerName,
          usages: wanted.signerName === CLIENT_SIGNER ? ['digital signature', 'client auth'] : ['digital signature', 'server auth'],
          ...(wanted.expirationSeconds ? { expirationSeconds: wanted.expirationSeconds } : {}),
        },
      });
      const name = created.metadata?.name;
      if (name === undefined) {
        throw new Error('the API server returned a CSR without a name');
      }
      info('csr.go:261', `waiting for certificate approval of ${name}`, { signerName: wanted.signerName });
      const certificatePem = await waitForCertificate(client, name, created.metadata?.uid, wanted.waitTimeoutSeconds, signal);
      info('csr.go:257', `certificate signing request ${name} is issued`);
      backoffSeconds = 2;
      return { certificatePem, privateKeyPem: key.privateKeyPem, csrName: name };
    } catch (cause) {
      if (signal?.aborted) {
        throw cause;
      }
      error('certificate_manager.go:488', `${wanted.signerName}: Failed while requesting a signed certificate from the control plane`, {
        err: cause instanceof Error ? cause.message : String(cause),
      });
    }
    await sleep(backoffSeconds * 1000, undefined, { signal });
    backoffSeconds = Math.min(backoffSeconds * 2, 32);
  }
}

async function waitForCertificate(
  client: KubeClient,
  name: string,
  uid: string | undefined,
  timeoutSeconds: number,
  signal?: AbortSignal,
): Promise<string> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let toldApproved = false;
  let lastReminder = Date.now();
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    let csr: CsrObject;
    try {
      csr = await client.get<CsrObject>(`${CSR_PATH}/${name}`);
    } catch (cause) {
      if (cause instanceof KubeApiError && cause.status === 404) {
        throw new Error(`cannot watch on the certificate signing request: certificate signing request ${name} was deleted`);
      }
      warn('csr.go:235', 'error getting certificate signing request, will retry', { name, err: cause instanceof Error ? cause.message : String(cause) });
      await sleep(1000, undefined, { signal });
      continue;
    }
    if (uid !== undefined && csr.metadata?.uid !== undefined && csr.metadata.uid !== uid) {
      throw new Error(`cannot watch on the certificate signing request: certificate signing request ${name} was replaced`);
    }
    const conditions = csr.status?.conditions ?? [];
    const denied = conditions.find((condition) => condition.type === 'Denied');
    if (denied !== undefined) {
      throw new Error(`cannot watch on the certificate signing request: certificate signing request is denied, reason: ${denied.reason ?? ''}, message: ${denied.message ?? ''}`);
    }
    const failed = conditions.find((condition) => condition.type === 'Failed');
    if (failed !== undefined) {
      throw new Error(`cannot watch on the certificate signing request: certificate signing request failed, reason: ${failed.reason ?? ''}, message: ${failed.message ?? ''}`);
    }
    if (csr.status?.certificate) {
      return Buffer.from(csr.status.certificate, 'base64').toString();
    }
    if (!toldApproved && conditions.some((condition) => condition.type === 'Approved')) {
      info('csr.go:261', `certificate signing request ${name} is approved, waiting to be issued`);
      toldApproved = true;
    }
    if (Date.now() - lastReminder > 60_000) {
      info('csr.go:261', `waiting for certificate approval of ${name}`);
      lastReminder = Date.now();
    }
    await sleep(1000, undefined, { signal });
  }
  throw new Error(`certificate request was not signed: timed out waiting for the condition (${name} left pending after ${timeoutSeconds}s)`);
}
