import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { BOOTSTRAP_GROUP_PATTERN, BOOTSTRAP_TOKEN_PATTERN, BOOTSTRAP_TOKEN_SECRET_TYPE } from './bootstrap-token';
import type { KubeSimClock } from './clock';
import type { ResourceDefinition } from './resource-definition';
import { secretData } from './resources/secrets';
import type { ObjectStore } from './store';
import type { StaticToken } from './token-file';
import type { UserInfo } from './user-info';

/** Outcome of authenticating one request. */
export type AuthResult = { kind: 'user'; user: UserInfo } | { kind: 'anonymous' } | { kind: 'rejected' };

export interface AuthenticatorOptions {
  store: ObjectStore;
  /** What bootstrap tokens' `expiration` is judged by. */
  clock: KubeSimClock;
  staticTokens?: readonly StaticToken[];
  /** Token of the built-in admin (`kube-sim-admin`, group `system:masters`). */
  adminToken?: string;
  /** Further bearer-token authenticators (legacy ServiceAccount tokens), tried after the built-in ones. */
  tokenAuthenticators?: readonly ((token: string) => UserInfo | undefined)[];
  /** The service-account token authenticator (tokens from the TokenRequest API). */
  serviceAccountTokens?: { authenticate(token: string): UserInfo | undefined };
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The user extra naming the credential a request authenticated with (`user.CredentialIDKey`). */
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

function withAuthenticated(user: UserInfo): UserInfo {
  return user.groups.includes('system:authenticated') ? user : { ...user, groups: [...user.groups, 'system:authenticated'] };
}

/** Subject fields as Node reports them: a string, or an array when repeated. */
function fieldValues(value: string | string[] | undefined): string[] {
  if (value === undefined) {
    return [];
  }
  return Array.isArray(value) ? value : [value];
}

/**
 * The API server's authenticator chain: x509 client certificates verified against the cluster CA
 * (CN = user, O = groups), then bearer tokens — the static token file, the admin token, bootstrap
 * token Secrets in kube-system, service-account tokens. Every authenticated user gets `system:authenticated`. Presented but
 * invalid credentials are rejected (401), never downgraded to anonymous.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authentication/
 */
export class Authenticator {
  private readonly secrets: ResourceDefinition;

  constructor(private readonly options: AuthenticatorOptions) {
    const secrets = options.store.definitions.find((d) => d.group === '' && d.resource === 'secrets');
    if (!secrets) {
      throw new Error('secrets are not served');
    }
    this.secrets = secrets;
  }

  authenticate(req: IncomingMessage): AuthResult {
    const socket = req.socket as Partial<TLSSocket>;
    if (typeof socket.getPeerCertificate === 'function') {
      const peer = socket.getPeerCertificate();
      if (peer && Object.keys(peer).length > 0) {
        if (!socket.authorized) {
          return { kind: 'rejected' };
        }
        const cn = fieldValues(peer.subject?.CN)[0] ?? '';
        // As kube-apiserver's CommonNameUserConversion (1.31+): the certificate's SHA-256 fingerprint
        // identifies the credential, and reaches a CSR's spec.extra like every extra.
        const credentialId = `X509SHA256=${createHash('sha256').update(peer.raw).digest('hex')}`;
        return { kind: 'user', user: withAuthenticated({ username: cn, groups: fieldValues(peer.subject?.O), extra: { [CREDENTIAL_ID_KEY]: [credentialId] } }) };
      }
    }
    const header = req.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const user = match ? this.authenticateToken(match[1]) : undefined;
      return user ? { kind: 'user', user: withAuthenticated(user) } : { kind: 'rejected' };
    }
    return { kind: 'anonymous' };
  }

  /** Resolves a bearer token to a user, or undefined when no authenticator accepts it. */
  authenticateToken(token: string): UserInfo | undefined {
    for (const entry of this.options.staticTokens ?? []) {
      if (sameSecret(entry.token, token)) {
        return { username: entry.user, uid: entry.uid || undefined, groups: [...entry.groups] };
      }
    }
    if (this.options.adminToken && sameSecret(this.options.adminToken, token)) {
      return { username: 'kube-sim-admin', groups: ['system:masters'] };
    }
    const known = this.bootstrapToken(token) ?? this.options.serviceAccountTokens?.authenticate(token);
    if (known) {
      return known;
    }
    for (const authenticate of this.options.tokenAuthenticators ?? []) {
      const user = authenticate(token);
      if (user) {
        return user;
      }
    }
    return undefined;
  }

  /**
   * Bootstrap token authenticator: `kube-system/bootstrap-token-<id>` of type
   * bootstrap.kubernetes.io/token, matching secret, `usage-bootstrap-authentication: "true"`, not
   * expired, not being deleted; user `system:bootstrap:<id>` in `system:bootstrappers` plus
   * `auth-extra-groups`.
   * @see https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/#token-authentication
   */
  private bootstrapToken(token: string): UserInfo | undefined {
    const match = BOOTSTRAP_TOKEN_PATTERN.exec(token);
    if (!match) {
      return undefined;
    }
    const [, id, secretPart] = match;
    const secret = this.options.store.get(this.secrets, 'kube-system', `bootstrap-token-${id}`);
    if (!secret || secret['type'] !== BOOTSTRAP_TOKEN_SECRET_TYPE || secret.metadata.deletionTimestamp) {
      return undefined;
    }
    const data = secretData(secret);
    if (data['token-id'] !== id || !sameSecret(data['token-secret'] ?? '', secretPart) || data['usage-bootstrap-authentication'] !== 'true') {
      return undefined;
    }
    if (data['expiration'] !== undefined) {
      const expires = Date.parse(data['expiration']);
      if (Number.isNaN(expires) || expires <= this.options.clock.now()) {
        return undefined;
      }
    }
    const extra = (data['auth-extra-groups'] ?? '').split(',').map((g) => g.trim()).filter(Boolean);
    if (extra.some((g) => !BOOTSTRAP_GROUP_PATTERN.test(g))) {
      return undefined;
    }
    return { username: `system:bootstrap:${id}`, groups: ['system:bootstrappers', ...extra] };
  }
}
