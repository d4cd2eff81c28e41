import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ClusterCertificates } from '@ccos/api/feature-csrs';
import { registerCertificateMetrics } from './certificate-metrics';
import { type ClusterNameOf, DomainMetrics } from './domain-metrics';

/** Prometheus metrics: default process metrics, HTTP and GraphQL request counts and durations, and the domain's (installs, CSRs, removals, SSH). */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly domain: DomainMetrics;
  readonly httpRequests = new Counter({
    name: 'ccos_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'ccos_http_request_duration_seconds',
    help: 'HTTP request duration by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly graphqlOperations = new Counter({
    name: 'ccos_graphql_operations_total',
    help: 'GraphQL operations by type, name and outcome',
    labelNames: ['type', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly impostorCsrs = new Counter({
    name: 'ccos_csr_impostors_denied_total',
    help: 'Client CSRs for a node being installed, filed by someone other than its install run\'s bootstrap identity, denied by the auto-approver',
    labelNames: ['cluster'] as const,
    registers: [this.registry],
  });
  readonly graphqlDuration = new Histogram({
    name: 'ccos_graphql_operation_duration_seconds',
    help: 'GraphQL operation duration by type and name',
    labelNames: ['type', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly loginAttempts = new Counter({
    name: 'ccos_login_attempts_total',
    help: 'Sign-in attempts by outcome: SUCCESS, WRONG_PASSWORD, DISABLED, THROTTLED (refused before a password check), BUSY (no check slot)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** `clusterName` turns cluster ids into the names the `cluster` labels carry. */
  constructor(clusterName: ClusterNameOf = async (clusterId) => clusterId) {
    collectDefaultMetrics({ register: this.registry });
    this.domain = new DomainMetrics(this.registry, clusterName);
  }

  /** Exposes certificate expiry per node and pending renewals (see certificate-metrics.ts). */
  followCertificates(read: () => Promise<readonly ClusterCertificates[]>): void {
    registerCertificateMetrics(this.registry, read);
  }

  /** Exposes the password-check slots: how many run and wait now, and the most that ever ran at once. */
  followPasswordChecks(stats: () => { readonly running: number; readonly waiting: number; readonly peak: number }): void {
    const gauge = (name: string, help: string, read: (current: ReturnType<typeof stats>) => number) =>
      new Gauge({ name, help, registers: [this.registry], collect() { this.set(read(stats())); } });
    gauge('ccos_password_checks_running', 'Password checks (scrypt) running now', (current) => current.running);
    gauge('ccos_password_checks_waiting', 'Sign-in attempts waiting for a password check slot', (current) => current.waiting);
    gauge('ccos_password_checks_peak', 'The most password checks that ran at once since the process started', (current) => current.peak);
  }

  /** Exposes how the agent reached hosts: copies and bytes sent, as a zstd stream or over SFTP. */
  followAgentCopies(stats: () => { readonly streamed: number; readonly streamedBytes: number; readonly sftp: number; readonly sftpBytes: number } | null): void {
    new Counter({
      name: 'ccos_agent_copies_total',
      help: 'Agent executables copied to hosts, by method (zstd stream over an exec channel, or SFTP)',
      labelNames: ['method'],
      registers: [this.registry],
      collect() {
        const current = stats();
        this.reset();
        this.inc({ method: 'zstd' }, current?.streamed ?? 0);
        this.inc({ method: 'sftp' }, current?.sftp ?? 0);
      },
    });
    new Counter({
      name: 'ccos_agent_copy_bytes_total',
      help: 'Bytes of agent executables sent to hosts over SSH, by method',
      labelNames: ['method'],
      registers: [this.registry],
      collect() {
        const current = stats();
        this.reset();
        this.inc({ method: 'zstd' }, current?.streamedBytes ?? 0);
        this.inc({ method: 'sftp' }, current?.sftpBytes ?? 0);
      },
    });
  }
}
