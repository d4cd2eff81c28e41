import { describe, expect, it } from 'vitest';
import { type CsrFacts, type CsrVerdict, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER } from './csr-policy';
import { CERTIFICATE_WARNING_DAYS, currentNodeCertificates, expiresWithin, oldestPendingRenewals } from './node-certificates';

const T = (iso: string): Date => new Date(`2026-06-01T${iso}Z`);

function csr(name: string, node: string, signerName: string, state: CsrFacts['state'], validity: [string, string] | null, createdAt = '10:00:00'): CsrFacts {
  return {
    name,
    signerName,
    username: `system:node:${node}`,
    groups: ['system:nodes'],
    usages: [],
    createdAt: T(createdAt),
    state,
    request: { commonNames: [`system:node:${node}`], organizations: ['system:nodes'], dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [], key: { algorithm: 'EC', bits: 256, curve: 'P-256' }, signatureValid: true },
    certificate: validity ? { dnsNames: [], ipAddresses: [], notBefore: T(validity[0]), notAfter: T(validity[1]) } : null,
  };
}

describe('currentNodeCertificates', () => {
  it('takes the newest issued certificate per node and kind, and nothing from pending, denied or unsigned CSRs', () => {
    const found = currentNodeCertificates([
      csr('c1', 'worker-1', KUBELET_CLIENT_SIGNER, 'APPROVED', ['09:00:00', '23:00:00']),
      csr('s1', 'worker-1', KUBELET_SERVING_SIGNER, 'APPROVED', ['09:00:00', '09:10:00']),
      csr('s2', 'worker-1', KUBELET_SERVING_SIGNER, 'APPROVED', ['09:08:00', '09:18:00']),
      csr('s3', 'Worker-1', KUBELET_SERVING_SIGNER, 'PENDING', null),
      csr('s4', 'worker-1', KUBELET_SERVING_SIGNER, 'DENIED', ['09:30:00', '09:40:00']),
      csr('s5', 'worker-1', KUBELET_SERVING_SIGNER, 'APPROVED', null),
      csr('x1', 'worker-2', 'example.com/other', 'APPROVED', ['09:00:00', '10:00:00']),
    ]);
    expect(found).toEqual([
      { node: 'worker-1', kind: 'CLIENT', notBefore: T('09:00:00'), notAfter: T('23:00:00'), csrName: 'c1' },
      { node: 'worker-1', kind: 'SERVING', notBefore: T('09:08:00'), notAfter: T('09:18:00'), csrName: 's2' },
    ]);
  });
});

describe('oldestPendingRenewals', () => {
  it('names the oldest pending CSR on the renewal path per node, not join CSRs', () => {
    const path: Record<string, CsrVerdict['path']> = { r1: 'RENEWAL', r2: 'RENEWAL', j1: 'JOIN' };
    const verdictOf = (entry: CsrFacts) => ({ path: path[entry.name] ?? 'JOIN' }) as CsrVerdict;
    const found = oldestPendingRenewals([
      csr('r2', 'worker-1', KUBELET_SERVING_SIGNER, 'PENDING', null, '10:05:00'),
      csr('r1', 'worker-1', KUBELET_SERVING_SIGNER, 'PENDING', null, '10:01:00'),
      csr('j1', 'worker-2', KUBELET_SERVING_SIGNER, 'PENDING', null, '09:00:00'),
    ], verdictOf);
    expect(found).toEqual([{ node: 'worker-1', csrName: 'r1', createdAt: T('10:01:00') }]);
  });
});

describe('expiresWithin', () => {
  it.each([
    [29.9, true],
    [30.1, false],
    [-1, true],
  ])('%d days left → %s', (days, expected) => {
    const now = T('12:00:00');
    expect(expiresWithin(new Date(now.getTime() + days * 86_400_000), now, CERTIFICATE_WARNING_DAYS)).toBe(expected);
  });
});
