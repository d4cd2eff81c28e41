import { Gauge, type Registry } from 'prom-client';
import type { ClusterCertificates } from '@ccos/api/feature-csrs';

/**
 * Certificate metrics, read from the CSR watch caches at scrape time: when each node's client and
 * serving certificates expire, and since when its oldest renewal waits. Timestamps rather than
 * ages, so the alert rules compare them with `time()` and a scrape's lateness does not matter.
 * @see https://prometheus.io/docs/practices/instrumentation/#timestamps-not-time-since
 */
export function registerCertificateMetrics(registry: Registry, read: () => Promise<readonly ClusterCertificates[]>): void {
  // Both gauges are filled by one read per scrape.
  let pending: Promise<readonly ClusterCertificates[]> | null = null;
  const once = (): Promise<readonly ClusterCertificates[]> => {
    pending ??= read().finally(() => {
      setImmediate(() => {
        pending = null;
      });
    });
    return pending;
  };
  new Gauge({
    name: 'ccos_certificate_expiry_timestamp_seconds',
    help: 'When the newest certificate the cluster issued for a node expires (notAfter, Unix seconds), by cluster, node and kind (client or serving)',
    labelNames: ['cluster', 'node', 'kind'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const cluster of await once()) {
        for (const certificate of cluster.certificates) {
          this.set({ cluster: cluster.clusterName, node: certificate.node, kind: certificate.kind.toLowerCase() }, certificate.notAfter.getTime() / 1000);
        }
      }
    },
  });
  new Gauge({
    name: 'ccos_certificate_renewal_pending_since_timestamp_seconds',
    help: 'When the oldest serving-certificate renewal of a node still waiting for a decision was created (Unix seconds), by cluster and node; absent when none waits',
    labelNames: ['cluster', 'node'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const cluster of await once()) {
        for (const renewal of cluster.pendingRenewals) {
          this.set({ cluster: cluster.clusterName, node: renewal.node }, renewal.createdAt.getTime() / 1000);
        }
      }
    },
  });
}
