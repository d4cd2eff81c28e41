import type { V1ServiceAccount } from '@kubernetes/client-node';
import { isStatus, type KubeClient } from './kube-client';

/** The API server refuses TokenRequests for less than this (pkg/apis/authentication/validation). */
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;

/** A ServiceAccount and a token for it: an identity the API server names `system:serviceaccount:<ns>:<name>`. */
export interface BootstrapIdentity {
  readonly namespace: string;
  readonly name: string;
  /** What the API server writes into `spec.username` of the CSRs it files. */
  readonly username: string;
  /** The ServiceAccount's UID (`spec.uid` of its CSRs); a re-created account has another. */
  readonly uid: string;
  /** The bearer token. A secret: hand it to one host only, never log or store it. */
  readonly token: string;
  /** When the API server stops accepting the token. */
  readonly expiresAt: Date;
}

export interface MintOptions {
  readonly namespace: string;
  readonly name: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  /** The token should not outlive this; the API server's minimum of 10 minutes applies. */
  readonly expiresAt: Date;
  readonly now?: Date;
  readonly signal?: AbortSignal;
}

/** `system:serviceaccount:<ns>:<name>`. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The namespace and name in a service-account user name, or null for any other user. */
export function parseServiceAccountUsername(username: string): { namespace: string; name: string } | null {
  const match = SERVICE_ACCOUNT_USER.exec(username);
  return match ? { namespace: match[1] ?? '', name: match[3] ?? '' } : null;
}

/**
 * Creates a ServiceAccount (or takes the one a previous attempt created under that name) and
 * asks the TokenRequest API for a token of it that expires at `expiresAt` (at least 10 minutes
 * from now, the API server's minimum). Deleting the account revokes every token of it.
 * Throws KubeApiError: 404 when the namespace does not exist, 403 without permission.
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
 * @see https://kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin/#bound-service-account-token-volume
 */
export async function mintBootstrapIdentity(client: KubeClient, options: MintOptions): Promise<BootstrapIdentity> {
  const { namespace, name, signal } = options;
  const body: V1ServiceAccount = {
    metadata: { name, labels: options.labels, annotations: options.annotations },
    // The account exists to carry a token; no pod may mount it.
    automountServiceAccountToken: false,
  };
  let account: V1ServiceAccount;
  try {
    account = await client.call(`create serviceaccount ${namespace}/${name}`, (callOptions) => client.core.createNamespacedServiceAccount({ namespace, body }, callOptions), signal);
  } catch (error) {
    if (!isStatus(error, 409)) {
      throw error;
    }
    account = await client.call(`read serviceaccount ${namespace}/${name}`, (callOptions) => client.core.readNamespacedServiceAccount({ namespace, name }, callOptions), signal);
  }
  const now = options.now ?? new Date();
  const expirationSeconds = Math.max(MIN_TOKEN_EXPIRATION_SECONDS, Math.ceil((options.expiresAt.getTime() - now.getTime()) / 1000));
  const answer = await client.call(
    `request a token for serviceaccount ${namespace}/${name}`,
    (callOptions) =>
      // No audiences: the API server's own, so the token authenticates to it and to nothing else.
      client.core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds } } }, callOptions),
    signal,
  );
  const token = answer.status?.token;
  if (!token) {
    throw new Error(`the API server answered the TokenRequest for serviceaccount ${namespace}/${name} without a token`);
  }
  return {
    namespace,
    name,
    username: serviceAccountUsername(namespace, name),
    uid: account.metadata?.uid ?? '',
    token,
    expiresAt: answer.status?.expirationTimestamp ? new Date(answer.status.expirationTimestamp) : new Date(now.getTime() + expirationSeconds * 1000),
  };
}

/**
 * Deletes the ServiceAccount of an identity, which makes the API server refuse its tokens at
 * once. With `uid`, only that account: one re-created under the name since is left alone.
 * Returns whether an account was deleted; a missing one is no error.
 */
export async function revokeBootstrapIdentity(client: KubeClient, identity: { namespace: string; name: string; uid?: string | null }, signal?: AbortSignal): Promise<boolean> {
  const { namespace, name } = identity;
  try {
    await client.call(
      `delete serviceaccount ${namespace}/${name}`,
      (callOptions) => client.core.deleteNamespacedServiceAccount({ namespace, name, body: identity.uid ? { preconditions: { uid: identity.uid } } : {} }, callOptions),
      signal,
    );
    return true;
  } catch (error) {
    if (isStatus(error, 404) || (identity.uid && isStatus(error, 409))) {
      return false;
    }
    throw error;
  }
}

/** The ServiceAccounts of a namespace that carry `labelSelector`: name, UID and labels. */
export async function listBootstrapIdentities(
  client: KubeClient,
  namespace: string,
  labelSelector: string,
  signal?: AbortSignal,
): Promise<Array<{ name: string; uid: string; labels: Record<string, string> }>> {
  const list = await client.call(`list serviceaccounts in ${namespace}`, (callOptions) => client.core.listNamespacedServiceAccount({ namespace, labelSelector }, callOptions), signal);
  return list.items.map((account) => ({ name: account.metadata?.name ?? '', uid: account.metadata?.uid ?? '', labels: account.metadata?.labels ?? {} }));
}

/**
 * Whether an identity may file CSRs, asked as the identity itself (a SelfSubjectAccessReview
 * needs no permission of its own): `denied` when the cluster's RBAC does not let it, which is
 * what a missing binding to system:node-bootstrapper looks like; `unknown` when the API server
 * does not answer the review (it does not serve the authorization API, or did not answer).
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access
 */
export async function mayFileCsrs(asIdentity: KubeClient, signal?: AbortSignal): Promise<{ verdict: 'allowed' | 'denied' | 'unknown'; reason: string | null }> {
  try {
    const review = await asIdentity.call(
      'review whether the identity may create certificatesigningrequests',
      (callOptions) =>
        asIdentity.authorization.createSelfSubjectAccessReview(
          { body: { spec: { resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create' } } } },
          callOptions,
        ),
      signal,
    );
    return { verdict: review.status?.allowed ? 'allowed' : 'denied', reason: review.status?.reason ?? null };
  } catch (error) {
    return { verdict: 'unknown', reason: (error as Error).message };
  }
}
