import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ClusterCertificates } from '@ccos/api/feature-csrs';
import { SERVICE_OPERATION_NAMES } from '@ccos/shared/api-schema';
import { registerCertificateMetrics } from './certificate-metrics';
import { type ClusterNameOf, DomainMetrics } from './domain-metrics';
import { CappedMetrics, OTHER_LABEL } from './series-cap';

/** HTTP methods as a label; Node's parser admits a few dozen, the rest are `other`. */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The routes this service labels; any other path is the console's. */
const ROUTES = ['/graphql', '/healthz', '/readyz', '/metrics', '/artifacts', '/agent'] as const;

/** A request's method as a label: one of {@link METHODS}, else `other`. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : OTHER_LABEL;
}

/** A path as a label: its first segment when that is one of {@link ROUTES}, else `console`. */
export function routeLabel(path: string): string {
  const first = `/${path.split('/')[1] ?? ''}`;
  return (ROUTES as readonly string[]).includes(first) ? first : 'console';
}

/**
 * A GraphQL operation name as a label: one of the service's own operations (the shared schema's
 * documents, {@link SERVICE_OPERATION_NAMES}), else `other`. The name is the client's text, so
 * anything else would let anyone mint a series per request.
 */
export function operationLabel(name: string | null | undefined): string {
  return name && SERVICE_OPERATION_NAMES.has(name) ? name : OTHER_LABEL;
}

/**
 * Prometheus metrics: default process metrics, HTTP and GraphQL request counts and durations, and
 * the domain's (installs, CSRs, removals, SSH). Every label takes its values from a fixed set, and
 * every counter and histogram keeps at most MAX_SERIES_PER_METRIC label sets (series-cap.ts).
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly capped = new CappedMetrics(this.registry);
  readonly domain: DomainMetrics;
  readonly httpRequests = this.capped.counter({
    name: 'ccos_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status'] as const,
  });
  readonly httpDuration = this.capped.histogram({
    name: 'ccos_http_request_duration_seconds',
    help: 'HTTP request duration by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  readonly graphqlOperations = this.capped.counter({
    name: 'ccos_graphql_operations_total',
    help: 'GraphQL operations by type, name and outcome',
    labelNames: ['type', 'operation', 'outcome'] as const,
  });
  readonly impostorCsrs = this.capped.counter({
    name: 'ccos_csr_impostors_denied_total',
    help: 'Client CSRs for a node being installed, filed by someone other than its install run\'s bootstrap identity, denied by the auto-approver',
    labelNames: ['cluster'] as const,
  });
  readonly graphqlDuration = this.capped.histogram({
    name: 'ccos_graphql_operation_duration_seconds',
    help: 'GraphQL operation duration by type and name',
    labelNames: ['type', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });

  readonly loginAttempts = this.capped.counter({
    name: 'ccos_login_attempts_total',
    help: 'Sign-in attempts by outcome: SUCCESS, WRONG_PASSWORD, DISABLED, THROTTLED (refused before a password check), BUSY (no check slot)',
    labelNames: ['outcome'] as const,
  });

  readonly webSocketRefusals = this.capped.counter({
    name: 'ccos_websocket_refusals_total',
    help: 'graphql-ws connections and operations refused by a limit: session, user or process (connections; closed with 4431, 4432, 4433), subscriptions (at once on one connection) or rate (operations a minute; closed with 4429)',
    labelNames: ['limit'] as const,
  });

  /** `clusterName` turns cluster ids into the names the `cluster` labels carry. */
  constructor(clusterName: ClusterNameOf = async (clusterId) => clusterId) {
    collectDefaultMetrics({ register: this.registry });
    this.domain = new DomainMetrics(this.registry, this.capped, clusterName);
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

  /** Exposes the graphql-ws connections open now. */
  followWebSockets(open: () => number): void {
    new Gauge({ name: 'ccos_websocket_connections', help: 'graphql-ws connections open now on this replica (signed in or not yet)', registers: [this.registry], collect() { this.set(open()); } });
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
