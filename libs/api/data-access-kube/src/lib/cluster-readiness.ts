import { randomBytes } from 'node:crypto';
import { mayFileCsrs, mintBootstrapIdentity, revokeBootstrapIdentity } from './bootstrap-identity';
import { isStatus, KubeApiError, type KubeClient } from './kube-client';
import { type ServiceNamespaces, type ServicePermission, servicePermissions } from './service-permissions';

/** Whether the service could mint a bootstrap identity in the namespace, as a dry-run create answered. */
export type BootstrapNamespaceVerdict = 'ready' | 'missing' | 'forbidden' | 'refused';

/** What a cluster's API server says about the service's readiness to install there. */
export interface ClusterReadiness {
  /** Who the registered credentials are; null when the API server does not serve SelfSubjectReview (before 1.28). */
  readonly username: string | null;
  readonly bootstrapNamespace: {
    readonly namespace: string;
    readonly verdict: BootstrapNamespaceVerdict;
    /** The API server's message when it refused (an excerpt). */
    readonly detail: string | null;
  };
  /** Each permission of the service and whether the API server says it has it. */
  readonly permissions: ReadonlyArray<{ readonly permission: ServicePermission; readonly allowed: boolean }>;
  /**
   * Whether an account of the bootstrap namespace may file CSRs (its binding to
   * system:node-bootstrapper), asked as such an account; null when none could be minted to ask
   * (the namespace is not ready, or the service may not request tokens or delete accounts there).
   */
  readonly runIdentities: { readonly verdict: 'allowed' | 'denied' | 'unknown'; readonly detail: string | null } | null;
}

/** Labels of the short-lived account a check mints, as the install runs' accounts carry `managed-by`. */
const CHECK_ACCOUNT_LABELS = { 'app.kubernetes.io/managed-by': 'ccos-scaler', 'ccos-scaler.io/purpose': 'cluster-check' };

/**
 * Asks the cluster, as the service's credentials, whether installs can start there: who the
 * credentials are (SelfSubjectReview), whether a ServiceAccount could be created in the bootstrap
 * namespace (a server-side dry run: authorized and admitted as `mintBootstrapIdentity`'s create,
 * nothing stored), a SelfSubjectAccessReview for every permission the service uses, and, when
 * the namespace is ready, whether its accounts may file CSRs (asked as a throwaway account that
 * is deleted again at once: the only write). Throws {@link KubeApiError} when the API server cannot be
 * reached or refuses the credentials (401).
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access
 */
export async function readClusterReadiness(client: KubeClient, namespaces: ServiceNamespaces, signal?: AbortSignal): Promise<ClusterReadiness> {
  const username = await readUsername(client, signal);
  const [bootstrapNamespace, permissions] = await Promise.all([
    dryRunServiceAccount(client, namespaces.bootstrap, signal),
    Promise.all(servicePermissions(namespaces).map(async (permission) => ({ permission, allowed: await mayDo(client, permission, signal) }))),
  ]);
  const allowed = (verb: string, subresource: string) =>
    permissions.some((entry) => entry.allowed && entry.permission.namespace === namespaces.bootstrap && entry.permission.resource === 'serviceaccounts' && entry.permission.subresource === subresource && entry.permission.verb === verb);
  const canMint = bootstrapNamespace.verdict === 'ready' && allowed('create', 'token') && allowed('delete', '');
  const runIdentities = canMint ? await runIdentitiesMayFileCsrs(client, namespaces.bootstrap, signal) : null;
  return { username, bootstrapNamespace, permissions, runIdentities };
}

/**
 * Mints an account in the bootstrap namespace as an install run does, asks as it whether it may
 * file CSRs (a SelfSubjectAccessReview needs no permission of its own; asking about another
 * subject would need `create subjectaccessreviews`, which the service does not have), and deletes
 * it again, which revokes its token.
 */
async function runIdentitiesMayFileCsrs(client: KubeClient, namespace: string, signal?: AbortSignal): Promise<NonNullable<ClusterReadiness['runIdentities']>> {
  const name = `ccos-scaler-check-${randomBytes(4).toString('hex')}`;
  let identity;
  try {
    identity = await mintBootstrapIdentity(client, { namespace, name, labels: CHECK_ACCOUNT_LABELS, expiresAt: new Date(), signal });
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.kind !== 'status') {
      throw error;
    }
    // The account may exist without its token.
    await revokeBootstrapIdentity(client, { namespace, name }).catch(() => false);
    return { verdict: 'unknown', detail: error.message };
  }
  try {
    const asIdentity = client.withToken(identity.token);
    try {
      const access = await mayFileCsrs(asIdentity, signal);
      return { verdict: access.verdict, detail: access.reason };
    } finally {
      asIdentity.close();
    }
  } finally {
    await revokeBootstrapIdentity(client, identity);
  }
}

/** Who the client's credentials are to the API server (SelfSubjectReview); null when it does not serve the review (before 1.28). */
export async function readUsername(client: KubeClient, signal?: AbortSignal): Promise<string | null> {
  try {
    const review = await client.call('review who the credentials are', (options) => client.authentication.createSelfSubjectReview({ body: {} }, options), signal);
    return review.status?.userInfo?.username ?? null;
  } catch (error) {
    // 404: an API server older than 1.28 has no SelfSubjectReview; anything else says more than a missing name.
    if (isStatus(error, 404)) {
      return null;
    }
    throw error;
  }
}

async function dryRunServiceAccount(client: KubeClient, namespace: string, signal?: AbortSignal): Promise<ClusterReadiness['bootstrapNamespace']> {
  // A name no run uses: a dry run answers AlreadyExists for a taken one.
  const name = `ccos-scaler-check-${randomBytes(4).toString('hex')}`;
  try {
    await client.call(
      `dry-run create serviceaccount ${namespace}/${name}`,
      (options) => client.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name }, automountServiceAccountToken: false }, dryRun: 'All' }, options),
      signal,
    );
    return { namespace, verdict: 'ready', detail: null };
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.kind !== 'status' || error.statusCode === 401) {
      throw error;
    }
    const detail = error.status?.message ?? error.message;
    if (error.statusCode === 404) {
      return { namespace, verdict: 'missing', detail };
    }
    return { namespace, verdict: error.statusCode === 403 ? 'forbidden' : 'refused', detail };
  }
}

async function mayDo(client: KubeClient, permission: ServicePermission, signal?: AbortSignal): Promise<boolean> {
  const { verb, group, resource, subresource, name, namespace } = permission;
  const review = await client.call(
    `review whether the service may ${verb} ${resource}`,
    (options) =>
      client.authorization.createSelfSubjectAccessReview(
        { body: { spec: { resourceAttributes: { verb, group, resource, ...(subresource ? { subresource } : {}), ...(name ? { name } : {}), ...(namespace ? { namespace } : {}) } } } },
        options,
      ),
    signal,
  );
  return review.status?.allowed === true;
}
