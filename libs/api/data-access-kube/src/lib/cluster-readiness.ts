import { randomBytes } from 'node:crypto';
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
}

/**
 * Asks the cluster, as the service's credentials, whether installs can start there: who the
 * credentials are (SelfSubjectReview), whether a ServiceAccount could be created in the bootstrap
 * namespace (a server-side dry run: authorized and admitted as `mintBootstrapIdentity`'s create,
 * nothing stored), and a SelfSubjectAccessReview for every permission the service uses.
 * Changes nothing in the cluster. Throws {@link KubeApiError} when the API server cannot be
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
  return { username, bootstrapNamespace, permissions };
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
