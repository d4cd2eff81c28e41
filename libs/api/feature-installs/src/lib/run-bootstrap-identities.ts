import type { Logger } from 'pino';
import type { InstallRunEntity, InstallRunStore, NodeEntity } from '@ccos/api/data-access-db';
import {
  type KubeClient, KubeApiError, mayFileCsrs, mintBootstrapIdentity, parseServiceAccountUsername, revokeBootstrapIdentity, serviceAccountUsername,
} from '@ccos/api/data-access-kube';

/** Labels of every ServiceAccount this service mints, so an operator can find (and clean up) them. */
export const BOOTSTRAP_IDENTITY_LABELS = { managedBy: 'app.kubernetes.io/managed-by', installRun: 'ccos-scaler.io/install-run' } as const;

/** The namespace bootstrap identities live in unless configured. */
export const DEFAULT_BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';

/** A client of a registered cluster, with the service's own credentials. */
export interface ClusterClients {
  clientFor(clusterId: string): Promise<KubeClient>;
}

/** The run's bootstrap identity could not be made; `detail` says what an operator has to fix. */
export class IdentityNotMinted extends Error {
  override readonly name = 'IdentityNotMinted';
  constructor(
    readonly detail: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`could not mint the run's bootstrap identity: ${detail}`, options);
  }
}

/** What the install runs need: an identity for a run's kubelet, and its revocation when the run ends. */
export interface RunIdentityIssuer {
  /** Mints the run's identity and returns the token for the host (a secret: only into the agent's 0600 config). */
  mint(node: NodeEntity, run: InstallRunEntity): Promise<{ readonly token: string; readonly username: string }>;
  /** Deletes the run's identity from the cluster, if it has one that is not revoked yet. */
  revoke(run: InstallRunEntity): Promise<void>;
}

/**
 * Per-run bootstrap identities: a ServiceAccount `run-<run id>` in a dedicated namespace and a
 * TokenRequest token for it that expires with the run's deadline. Only the run's host gets the
 * token (in the agent's config, over the authenticated SSH session); its kubelet files its
 * client CSR with it, and the auto-approver approves a client CSR only when `spec.username`
 * is that identity. The account is deleted when the run ends (its tokens then stop working at
 * once) — by whoever ends it, and by {@link revokeEnded} for runs that ended while this replica
 * was down or the cluster unreachable.
 *
 * The namespace and its RBAC come with the deployment, not from here: the service creates and
 * deletes ServiceAccounts and asks for their tokens in that one namespace, and the namespace's
 * accounts are bound to `system:node-bootstrapper` (create CSRs, nothing else).
 */
export class RunBootstrapIdentities implements RunIdentityIssuer {
  constructor(
    private readonly runs: InstallRunStore,
    private readonly clusters: ClusterClients,
    private readonly namespace: string,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async mint(node: NodeEntity, run: InstallRunEntity): Promise<{ token: string; username: string }> {
    const name = `run-${run.id}`;
    const username = serviceAccountUsername(this.namespace, name);
    // Written before the account exists, so a crash in between still leaves a record to revoke.
    await this.runs.recordIdentityWhileRunning(run.id, { bootstrapIdentity: username, bootstrapIdentityUid: null, bootstrapIdentityRevokedAt: null });
    const client = await this.clusters.clientFor(node.clusterId);
    const deadline = run.deadlineAt ?? new Date(this.now().getTime() + 3600_000);
    let identity;
    try {
      identity = await mintBootstrapIdentity(client, {
        namespace: this.namespace,
        name,
        labels: { [BOOTSTRAP_IDENTITY_LABELS.managedBy]: 'ccos-scaler', [BOOTSTRAP_IDENTITY_LABELS.installRun]: run.id },
        annotations: { 'ccos-scaler.io/node': node.hostname, 'ccos-scaler.io/deadline': deadline.toISOString() },
        expiresAt: deadline,
        now: this.now(),
      });
    } catch (error) {
      throw new IdentityNotMinted(this.explain(error), { cause: error });
    }
    // A missing binding to system:node-bootstrapper would only show as a kubelet that never joins: say so now.
    const asIdentity = client.withToken(identity.token);
    const access = await mayFileCsrs(asIdentity).finally(() => asIdentity.close());
    if (access.verdict === 'denied') {
      await this.revoke(await this.runs.get(run.id)).catch(() => undefined);
      throw new IdentityNotMinted(
        `${identity.username} may not create certificatesigningrequests${access.reason ? ` (${access.reason})` : ''}; bind system:node-bootstrapper to the group system:serviceaccounts:${this.namespace} (a ClusterRoleBinding)`,
      );
    }
    if (access.verdict === 'unknown') {
      this.logger.debug({ runId: run.id, reason: access.reason }, 'could not check that the bootstrap identity may file CSRs');
    }
    const stored = await this.runs.recordIdentityWhileRunning(run.id, { bootstrapIdentity: identity.username, bootstrapIdentityUid: identity.uid, bootstrapIdentityExpiresAt: identity.expiresAt });
    if (!stored) {
      // The run ended while the identity was being minted: it must not outlive it.
      await this.revoke(await this.runs.get(run.id));
      throw new Error('the run ended while its bootstrap identity was being minted');
    }
    this.logger.info({ runId: run.id, nodeId: node.id, identity: identity.username, expiresAt: identity.expiresAt }, 'bootstrap identity minted');
    return { token: identity.token, username: identity.username };
  }

  async revoke(run: InstallRunEntity): Promise<void> {
    const current = await this.runs.find(run.id);
    const account = current?.bootstrapIdentity ? parseServiceAccountUsername(current.bootstrapIdentity) : null;
    if (!current || !account || current.bootstrapIdentityRevokedAt) {
      return;
    }
    const clusterId = await this.clusterOf(current);
    const client = await this.clusters.clientFor(clusterId);
    await revokeBootstrapIdentity(client, { ...account, uid: current.bootstrapIdentityUid });
    await this.runs.identityRevoked(run.id, this.now());
    this.logger.info({ runId: run.id, identity: current.bootstrapIdentity }, 'bootstrap identity revoked');
  }

  /**
   * Revokes the identities of runs that ended, or passed their deadline, and still hold one:
   * after a restart, or when the cluster did not answer at the time. Returns how many.
   */
  async revokeEnded(): Promise<number> {
    const due = await this.runs.withIdentityToRevoke(this.now());
    let revoked = 0;
    for (const run of due) {
      try {
        await this.revoke(run);
        revoked += 1;
      } catch (error) {
        this.logger.warn({ err: error, runId: run.id, identity: run.bootstrapIdentity }, 'could not revoke a bootstrap identity; trying again later');
      }
    }
    return revoked;
  }

  private async clusterOf(run: InstallRunEntity): Promise<string> {
    const clusterId = await this.runs.clusterOf(run);
    if (!clusterId) {
      throw new Error(`the node of run ${run.id} is gone`);
    }
    return clusterId;
  }

  /** What an operator has to fix when minting fails. */
  private explain(error: unknown): string {
    const namespace = this.namespace;
    const setup = `the service needs, in namespace ${namespace}: create, get and delete on serviceaccounts and create on serviceaccounts/token; and a ClusterRoleBinding of system:node-bootstrapper to the group system:serviceaccounts:${namespace}; \`ccos-scaler clusters prepare\` prints the manifest, \`ccos-scaler clusters check\` what else is missing`;
    if (error instanceof KubeApiError && error.statusCode === 404 && error.status?.details?.kind === 'namespaces') {
      return `namespace ${namespace} does not exist in the cluster; create it with the deployment's RBAC (${setup})`;
    }
    if (error instanceof KubeApiError && error.statusCode === 403) {
      return `the cluster refused it (${error.status?.message ?? error.message}); ${setup}`;
    }
    return (error as Error).message;
  }
}
