import {
  KubeApiError,
  SHIPPED_SERVICE_SUBJECT,
  type ClusterReadiness,
  type KubeClient,
  type ServiceNamespaces,
  bootstrapIdentitiesManifest,
  createKubeClient,
  describePermission,
  readClusterReadiness,
  readUsername,
  subjectOfUsername,
} from '@ccos/api/data-access-kube';
import { AppError, PreconditionError } from '@ccos/api/util-graphql';
import { type CodedText, type Message, bare, message } from '@ccos/shared/messages';
import type { ClusterService } from './cluster.service';

/** The stable names of the checks, in the order they are answered. */
export type ClusterCheckName = 'API_ACCESS' | 'BOOTSTRAP_NAMESPACE' | 'SERVICE_PERMISSIONS' | 'RUN_IDENTITIES_FILE_CSRS';

/** One readiness check of a cluster: what it found and the exact manifest or command that fixes it. */
export interface ClusterCheck {
  readonly name: ClusterCheckName;
  readonly ok: boolean;
  readonly reason: CodedText;
  readonly fix: string | null;
}

/** The shipped RBAC of every managed cluster, the fix for a missing permission. */
export const APPLY_SHIPPED_RBAC = 'kubectl apply -k deploy/base/rbac';

const REQUEST_TIMEOUT_MS = 5_000;
const CHECK_TIMEOUT_MS = 10_000;

/**
 * Whether a registered cluster is ready for installs, asked of its API server as the service
 * itself, before anyone adds hosts: the credentials work, install runs can get their bootstrap
 * identity, and the service has every permission it uses. Reads only (dry runs and access
 * reviews), on a client of its own, so a cluster whose watches fail for want of a permission is
 * still checked.
 */
export class ClusterCheckService {
  /**
   * The check under way per cluster. A check costs the cluster's API server about 30 requests and
   * one throwaway account, and any VIEWER may ask: callers asking while one runs share its answer,
   * so no number of them makes a cluster answer more than one check at a time.
   */
  private readonly running = new Map<string, Promise<ClusterCheck[]>>();

  constructor(
    private readonly clusters: ClusterService,
    private readonly namespaces: ServiceNamespaces,
  ) {}

  check(clusterId: string): Promise<ClusterCheck[]> {
    const running = this.running.get(clusterId);
    if (running) {
      return running;
    }
    const checked = this.checkNow(clusterId).finally(() => this.running.delete(clusterId));
    this.running.set(clusterId, checked);
    return checked;
  }

  /**
   * Refuses an install while the cluster's last check found something failing that a check now
   * still finds failing (a fix applied since passes at once). A cluster never checked, or whose
   * last check passed, is not checked again: a batch of installs costs its API server nothing.
   */
  async requireReady(clusterId: string): Promise<void> {
    const cluster = await this.clusters.get(clusterId);
    if (!cluster.readinessFailing?.length) {
      return;
    }
    const failing = (await this.check(clusterId)).filter((check) => !check.ok).map((check) => check.name);
    if (failing.length > 0) {
      throw new PreconditionError(message('install.clusterNotReady', { cluster: cluster.name, checks: failing.join(', '), count: failing.length }), { failing });
    }
  }

  private async checkNow(clusterId: string): Promise<ClusterCheck[]> {
    const checks = await this.runChecks(clusterId);
    await this.clusters.recordReadiness(clusterId, checks.filter((check) => !check.ok).map((check) => check.name));
    return checks;
  }

  private async runChecks(clusterId: string): Promise<ClusterCheck[]> {
    let readiness: ClusterReadiness;
    try {
      readiness = await this.withClient(clusterId, (client) => readClusterReadiness(client, this.namespaces, AbortSignal.timeout(CHECK_TIMEOUT_MS)));
    } catch (error) {
      if (error instanceof KubeApiError) {
        return [{ name: 'API_ACCESS', ok: false, reason: message('clusterCheck.apiAccess.failed', { error: error.message }), fix: null }];
      }
      throw error;
    }
    return checksOf(readiness, this.namespaces);
  }

  /**
   * The manifest that lets the cluster's install runs get bootstrap identities: the bootstrap
   * namespace, its binding to system:node-bootstrapper, and the service's Role there bound to
   * whoever the registered credentials are (the shipped account when the API server cannot say).
   */
  async bootstrapManifest(clusterId: string): Promise<string> {
    try {
      const username = await this.withClient(clusterId, (client) => readUsername(client, AbortSignal.timeout(CHECK_TIMEOUT_MS)));
      return bootstrapIdentitiesManifest(this.namespaces.bootstrap, username ? subjectOfUsername(username) : SHIPPED_SERVICE_SUBJECT);
    } catch (error) {
      if (error instanceof KubeApiError) {
        throw new AppError('CLUSTER_UNREACHABLE', message('clusterCheck.apiAccess.failed', { error: error.message }), { clusterId }, error);
      }
      throw error;
    }
  }

  /** A client of the check's own (not the shared watch connection), closed when `work` ends. */
  private async withClient<T>(clusterId: string, work: (client: KubeClient) => Promise<T>): Promise<T> {
    const cluster = await this.clusters.get(clusterId);
    const client = createKubeClient({ ...this.clusters.clientOptionsOf(cluster), requestTimeoutMs: REQUEST_TIMEOUT_MS });
    try {
      return await work(client);
    } finally {
      client.close();
    }
  }
}

function checksOf(readiness: ClusterReadiness, namespaces: ServiceNamespaces): ClusterCheck[] {
  const who: string | Message = readiness.username ?? bare(message('clusterCheck.theCredentials'));
  const { namespace, verdict, detail } = readiness.bootstrapNamespace;
  const manifest = bootstrapIdentitiesManifest(namespaces.bootstrap, readiness.username ? subjectOfUsername(readiness.username) : SHIPPED_SERVICE_SUBJECT);
  const missing = readiness.permissions.filter((entry) => !entry.allowed).map((entry) => describePermission(entry.permission));
  return [
    { name: 'API_ACCESS', ok: true, reason: message('clusterCheck.apiAccess.ok', { who }), fix: null },
    {
      name: 'BOOTSTRAP_NAMESPACE',
      ok: verdict === 'ready',
      reason:
        verdict === 'ready'
          ? message('clusterCheck.bootstrap.ok', { namespace })
          : verdict === 'missing'
            ? message('clusterCheck.bootstrap.missing', { namespace })
            : verdict === 'forbidden'
              ? message('clusterCheck.bootstrap.forbidden', { namespace, who })
              : message('clusterCheck.bootstrap.refused', { namespace, detail: detail ?? '' }),
      fix: verdict === 'ready' ? null : manifest,
    },
    {
      name: 'SERVICE_PERMISSIONS',
      ok: missing.length === 0,
      reason: missing.length === 0 ? message('clusterCheck.permissions.ok', { who, count: readiness.permissions.length }) : message('clusterCheck.permissions.missing', { who, count: missing.length, missing: missing.join(', ') }),
      fix: missing.length === 0 ? null : APPLY_SHIPPED_RBAC,
    },
    ...(readiness.runIdentities ? [runIdentitiesCheck(readiness.runIdentities, namespace, manifest)] : []),
  ];
}

function runIdentitiesCheck(runIdentities: NonNullable<ClusterReadiness['runIdentities']>, namespace: string, manifest: string): ClusterCheck {
  const { verdict, detail } = runIdentities;
  return {
    name: 'RUN_IDENTITIES_FILE_CSRS',
    ok: verdict === 'allowed',
    reason: verdict === 'allowed' ? message('clusterCheck.runCsrs.ok', { namespace }) : verdict === 'denied' ? message('clusterCheck.runCsrs.denied', { namespace }) : message('clusterCheck.runCsrs.unknown', { namespace, detail: detail ?? '' }),
    fix: verdict === 'denied' ? manifest : null,
  };
}
