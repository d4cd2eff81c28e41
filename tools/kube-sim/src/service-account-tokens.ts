import { createPublicKey, generateKeyPairSync, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { badRequest, invalid, notFound, type FieldError } from './api-error';
import { isJsonObject, type JsonObject, type JsonValue } from './json-value';
import { kubeTime } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import type { ObjectStore } from './store';
import type { UserInfo } from './user-info';

/** The issuer and default audience of a kubeadm cluster's service-account tokens. */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** TokenRequest limits of the API server (pkg/apis/authentication/validation). */
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
/** The API server's default `spec.expirationSeconds`. */
const DEFAULT_EXPIRATION_SECONDS = 3600;
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
/** The extra key 1.32 API servers put the token's JTI under. */
const CREDENTIAL_ID_EXTRA = 'authentication.kubernetes.io/credential-id';

export interface ServiceAccountTokenOptions {
  /** `iss` of issued tokens (`--service-account-issuer`). */
  issuer?: string;
  /** Audiences the API server accepts (`--api-audiences`); the default audience of a TokenRequest. */
  audiences?: string[];
  /** Milliseconds since the epoch; tests move it to expire tokens. Default: the simulator's clock. */
  now?: () => number;
}

interface Claims {
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  'kubernetes.io': { namespace: string; serviceaccount: { name: string; uid: string } };
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

function integer(value: JsonValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

/**
 * Bound service-account tokens, as kube-apiserver's TokenRequest API and its service-account
 * authenticator do them: `POST .../serviceaccounts/<name>/token` answers a TokenRequest whose
 * `status.token` is an ES256-signed JWT for `spec.audiences` (default: the API audiences) that
 * expires after `spec.expirationSeconds` (600 s to 2^32 s, default 3600). A token authenticates as
 * `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts` and `system:serviceaccounts:<ns>`
 * only while it has not expired, names one of the API audiences, and its ServiceAccount still
 * exists with the UID it was issued for (a deleted or re-created account revokes it).
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authentication/#service-account-tokens
 */
export class ServiceAccountTokens {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly keyId: string;
  private readonly issuer: string;
  private readonly audiences: string[];
  private readonly now: () => number;

  constructor(
    private readonly store: ObjectStore,
    private readonly serviceAccounts: ResourceDefinition,
    options: ServiceAccountTokenOptions = {},
  ) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = createPublicKey(pair.privateKey);
    this.keyId = randomUUID();
    this.issuer = options.issuer ?? DEFAULT_SERVICE_ACCOUNT_ISSUER;
    this.audiences = options.audiences ?? [this.issuer];
    this.now = options.now ?? Date.now;
  }

  /** Answers a TokenRequest for an existing ServiceAccount (404 when it does not exist, 422 for a bad duration). */
  request(namespace: string, name: string, body: JsonValue | undefined): JsonObject {
    const request = body === undefined ? {} : body;
    if (!isJsonObject(request)) {
      throw badRequest('the body of the request was not a JSON object');
    }
    const spec = isJsonObject(request['spec']) ? request['spec'] : {};
    const expirationSeconds = integer(spec['expirationSeconds']) ?? DEFAULT_EXPIRATION_SECONDS;
    const errors: FieldError[] = [];
    if (spec['expirationSeconds'] !== undefined && spec['expirationSeconds'] !== null && integer(spec['expirationSeconds']) === undefined) {
      errors.push({ type: 'Invalid', field: 'spec.expirationSeconds', value: spec['expirationSeconds'], detail: 'must be a whole number of seconds' });
    } else if (expirationSeconds < MIN_EXPIRATION_SECONDS) {
      errors.push({ type: 'Invalid', field: 'spec.expirationSeconds', value: expirationSeconds, detail: 'may not specify a duration less than 10 minutes' });
    } else if (expirationSeconds > MAX_EXPIRATION_SECONDS) {
      errors.push({ type: 'Invalid', field: 'spec.expirationSeconds', value: expirationSeconds, detail: 'may not specify a duration larger than 2^32 seconds' });
    }
    if (spec['boundObjectRef'] !== undefined && spec['boundObjectRef'] !== null && isJsonObject(spec['boundObjectRef']) && Object.keys(spec['boundObjectRef']).length > 0) {
      errors.push({ type: 'NotSupported', field: 'spec.boundObjectRef', value: spec['boundObjectRef'], detail: 'kube-sim binds tokens to their ServiceAccount only' });
    }
    if (errors.length > 0) {
      throw invalid({ resource: 'tokenrequests', group: 'authentication.k8s.io', kind: 'TokenRequest', name }, errors);
    }
    const account = this.store.get(this.serviceAccounts, namespace, name);
    if (!account || account.metadata.deletionTimestamp) {
      throw notFound({ resource: 'serviceaccounts', group: '', name });
    }
    const requested = Array.isArray(spec['audiences']) ? spec['audiences'].filter((entry): entry is string => typeof entry === 'string' && entry !== '') : [];
    const audiences = requested.length > 0 ? requested : this.audiences;
    const issuedAt = Math.floor(this.now() / 1000);
    const claims: Claims = {
      aud: audiences,
      exp: issuedAt + expirationSeconds,
      iat: issuedAt,
      nbf: issuedAt,
      iss: this.issuer,
      jti: randomUUID(),
      sub: `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`,
      'kubernetes.io': { namespace, serviceaccount: { name, uid: account.metadata.uid ?? '' } },
    };
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: kubeTime(new Date(issuedAt * 1000)) },
      spec: { audiences, expirationSeconds, boundObjectRef: null },
      status: { token: this.sign(claims), expirationTimestamp: kubeTime(new Date(claims.exp * 1000)) },
    };
  }

  /** The service account a bearer token stands for, or undefined when it is not a valid token of ours. */
  authenticate(token: string): UserInfo | undefined {
    const claims = this.verify(token);
    if (!claims) {
      return undefined;
    }
    const now = Math.floor(this.now() / 1000);
    if (claims.nbf > now || claims.exp <= now || claims.iss !== this.issuer || !claims.aud.some((audience) => this.audiences.includes(audience))) {
      return undefined;
    }
    const { namespace, serviceaccount } = claims['kubernetes.io'];
    if (claims.sub !== `${SERVICE_ACCOUNT_PREFIX}${namespace}:${serviceaccount.name}`) {
      return undefined;
    }
    const account = this.store.get(this.serviceAccounts, namespace, serviceaccount.name);
    if (!account || account.metadata.deletionTimestamp || account.metadata.uid !== serviceaccount.uid) {
      return undefined;
    }
    return {
      username: claims.sub,
      uid: serviceaccount.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
      extra: { [CREDENTIAL_ID_EXTRA]: [`JTI=${claims.jti}`] },
    };
  }

  private sign(claims: Claims): string {
    const header = base64url(JSON.stringify({ alg: 'ES256', kid: this.keyId }));
    const payload = base64url(JSON.stringify(claims));
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${header}.${payload}.${base64url(signature)}`;
  }

  /** The claims of a JWT signed by our key, or undefined. */
  private verify(token: string): Claims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) {
      return undefined;
    }
    const [header, payload, signature] = parts as [string, string, string];
    try {
      const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown; kid?: unknown };
      if (head.alg !== 'ES256' || head.kid !== this.keyId) {
        return undefined;
      }
      const valid = verify('sha256', Buffer.from(`${header}.${payload}`), { key: this.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
      if (!valid) {
        return undefined;
      }
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<Claims>;
      const account = claims['kubernetes.io']?.serviceaccount;
      if (
        typeof claims.exp !== 'number' || typeof claims.nbf !== 'number' || typeof claims.iss !== 'string' || typeof claims.sub !== 'string' ||
        typeof claims.jti !== 'string' || !Array.isArray(claims.aud) || typeof claims['kubernetes.io']?.namespace !== 'string' ||
        typeof account?.name !== 'string' || typeof account.uid !== 'string'
      ) {
        return undefined;
      }
      return claims as Claims;
    } catch {
      return undefined;
    }
  }
}
