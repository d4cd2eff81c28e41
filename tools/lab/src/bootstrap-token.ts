import { randomInt } from 'node:crypto';
import { KubeApiError, type KubeClient } from './kube/kube-client';

/**
 * A kubeadm-style bootstrap token for the stand-in kubelets: the Secret
 * `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`;
 * the bearer token is `<id>.<secret>` and authenticates as
 * `system:bootstrap:<id>` (groups system:bootstrappers + extra groups).
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/
 */
export interface BootstrapToken {
  readonly id: string;
  readonly secret: string;
  /** `<id>.<secret>` */
  readonly token: string;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(length: number): string {
  return Array.from({ length }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
}

/** A new random token (6-character id, 16-character secret). */
export function newBootstrapToken(): BootstrapToken {
  const id = randomString(6);
  const secret = randomString(16);
  return { id, secret, token: `${id}.${secret}` };
}

/** The Secret that makes the token valid. */
export function bootstrapTokenSecret(token: BootstrapToken, expiresAt?: Date): Record<string, unknown> {
  const data: Record<string, string> = {
    'token-id': token.id,
    'token-secret': token.secret,
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true',
    'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
    description: 'ccos lab: bootstrap token for worker kubelets',
    ...(expiresAt === undefined ? {} : { expiration: expiresAt.toISOString().replace(/\.\d+Z$/, 'Z') }),
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'bootstrap.kubernetes.io/token',
    metadata: { name: `bootstrap-token-${token.id}`, namespace: 'kube-system' },
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
  };
}

/** Creates the token's Secret in the cluster (creating kube-system when the cluster lacks it). */
export async function createBootstrapToken(client: KubeClient, token: BootstrapToken): Promise<void> {
  try {
    await client.post('/api/v1/namespaces/kube-system/secrets', bootstrapTokenSecret(token));
  } catch (cause) {
    if (cause instanceof KubeApiError && cause.status === 404) {
      await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } });
      await client.post('/api/v1/namespaces/kube-system/secrets', bootstrapTokenSecret(token));
      return;
    }
    throw cause;
  }
}
