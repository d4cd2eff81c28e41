import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ClusterCertificates } from '@ccos/api/feature-csrs';
import { registerCertificateMetrics } from './certificate-metrics';

const at = (iso: string): Date => new Date(iso);

function picture(): ClusterCertificates[] {
  const base = { nodeId: null, source: 'ISSUED_CSR' as const, expiresInSeconds: 0, expiringSoon: false, notBefore: at('2026-01-01T00:00:00Z') };
  return [
    {
      clusterId: 'c1',
      clusterName: 'lab',
      certificates: [
        { ...base, node: 'worker-1', kind: 'CLIENT', csrName: 'csr-a', notAfter: at('2027-01-01T00:00:00Z') },
        { ...base, node: 'worker-1', kind: 'SERVING', csrName: 'csr-b', notAfter: at('2026-01-01T00:10:00Z') },
      ],
      pendingRenewals: [{ node: 'worker-1', nodeId: null, csrName: 'csr-c', createdAt: at('2026-01-01T00:05:00Z'), reason: 'renewal auto-approve is off' }],
    },
  ];
}

describe('certificate metrics', () => {
  it('exposes expiry per cluster, node and kind and the oldest pending renewal, reading once per scrape and forgetting what is gone', async () => {
    const registry = new Registry();
    let reads = 0;
    let current = picture();
    registerCertificateMetrics(registry, async () => {
      reads += 1;
      return current;
    });
    const text = await registry.metrics();
    expect(text).toContain('ccos_certificate_expiry_timestamp_seconds{cluster="lab",node="worker-1",kind="client"} 1798761600');
    expect(text).toContain('ccos_certificate_expiry_timestamp_seconds{cluster="lab",node="worker-1",kind="serving"} 1767226200');
    expect(text).toContain('ccos_certificate_renewal_pending_since_timestamp_seconds{cluster="lab",node="worker-1"} 1767225900');
    expect(reads).toBe(1);

    current = [{ ...picture()[0], pendingRenewals: [] }];
    await new Promise((resolve) => setImmediate(resolve));
    const later = await registry.metrics();
    expect(later).not.toContain('ccos_certificate_renewal_pending_since_timestamp_seconds{');
    expect(reads).toBe(2);
  });
});
