import { createPublicKey, generateKeyPairSync, sign, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { cloneJson, isJsonObject } from './json-value';
import type { KubeObject } from './kube-object';
import type { ObjectApi } from './object-api';
import type { ResourceDefinition } from './resource-definition';
import { secretData } from './resources/secrets';
import type { StoreEvent } from './store';
import type { UserInfo } from './user-info';

/** Secret type of legacy ServiceAccount token Secrets. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
/** Annotation naming the ServiceAccount of a token Secret. */
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const SERVICE_ACCOUNT_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const CONTROLLER_USER: UserInfo = { username: 'system:kube-controller-manager', groups: ['system:masters', 'system:authenticated'] };

const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

/** The groups of every ServiceAccount identity. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

function find(api: ObjectApi, resource: string): ResourceDefinition {
  return api.resource('', 'v1', resource);
}

/**
 * kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers: every namespace
 * gets a `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap with the cluster CA, recreated
 * when deleted while the namespace lives.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin/#serviceaccount-controller
 */
export class ServiceAccountsController {
  private readonly unsubscribe: () => void;
  private readonly namespaces: ResourceDefinition;
  private readonly serviceAccounts: ResourceDefinition;
  private readonly configMaps: ResourceDefinition;
  private readonly pending = new Set<NodeJS.Immediate>();

  constructor(private readonly api: ObjectApi, private readonly caCertPem: string) {
    this.namespaces = find(api, 'namespaces');
    this.serviceAccounts = find(api, 'serviceaccounts');
    this.configMaps = find(api, 'configmaps');
    for (const ns of api.store.list(this.namespaces)) {
      this.ensure(ns.metadata.name ?? '');
    }
    this.unsubscribe = api.store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource === this.namespaces && event.type === 'ADDED') {
      this.ensure(event.object.metadata.name ?? '');
    } else if (event.type === 'DELETED' && (event.resource === this.serviceAccounts || event.resource === this.configMaps)) {
      // Later, as the real controllers react: a namespace being emptied must not get them back.
      const timer = setImmediate(() => {
        this.pending.delete(timer);
        this.ensure(event.object.metadata.namespace ?? '');
      });
      this.pending.add(timer);
    }
  }

  private ensure(namespace: string): void {
    const ns = this.api.store.get(this.namespaces, undefined, namespace);
    if (!ns || ns.metadata.deletionTimestamp) {
      return;
    }
    if (!this.api.store.get(this.serviceAccounts, namespace, 'default')) {
      this.api.create(this.serviceAccounts, namespace, { metadata: { name: 'default' } }, { user: CONTROLLER_USER });
    }
    if (!this.api.store.get(this.configMaps, namespace, ROOT_CA_CONFIGMAP)) {
      this.api.create(
        this.configMaps,
        namespace,
        {
          metadata: { name: ROOT_CA_CONFIGMAP, annotations: { 'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.' } },
          data: { 'ca.crt': this.caCertPem },
        },
        { user: CONTROLLER_USER },
      );
    }
  }

  stop(): void {
    this.unsubscribe();
    this.pending.forEach(clearImmediate);
    this.pending.clear();
  }
}

/**
 * Legacy ServiceAccount tokens: kube-controller-manager's tokens controller fills every Secret of
 * type `kubernetes.io/service-account-token` that names an existing ServiceAccount with a signed
 * JWT (`token`), `ca.crt` and `namespace`, deletes such Secrets whose ServiceAccount is gone, and
 * the API server's authenticator accepts those tokens while the Secret and the ServiceAccount (same
 * uid) exist, as `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts` and
 * `system:serviceaccounts:<ns>`. Tokens are ES256 JWTs with the `kubernetes/serviceaccount` issuer.
 * @see https://kubernetes.io/docs/concepts/configuration/secret/#serviceaccount-token-secrets
 */
export class LegacyServiceAccountTokens {
  private readonly unsubscribe: () => void;
  private readonly secrets: ResourceDefinition;
  private readonly serviceAccounts: ResourceDefinition;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor(private readonly api: ObjectApi, private readonly caCertPem: string) {
    this.secrets = find(api, 'secrets');
    this.serviceAccounts = find(api, 'serviceaccounts');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicKey = createPublicKey(privateKey);
    for (const secret of api.store.list(this.secrets)) {
      this.syncSecret(secret);
    }
    this.unsubscribe = api.store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource === this.secrets && event.type !== 'DELETED') {
      this.syncSecret(event.object);
    } else if (event.resource === this.serviceAccounts && event.type === 'DELETED') {
      for (const secret of this.api.store.list(this.secrets, { namespace: event.object.metadata.namespace })) {
        if (secret['type'] === SERVICE_ACCOUNT_TOKEN_TYPE && secret.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] === event.object.metadata.name) {
          this.api.delete(this.secrets, secret.metadata.namespace, secret.metadata.name ?? '', { user: CONTROLLER_USER });
        }
      }
    }
  }

  private syncSecret(secret: KubeObject): void {
    if (secret['type'] !== SERVICE_ACCOUNT_TOKEN_TYPE || secret.metadata.deletionTimestamp) {
      return;
    }
    const namespace = secret.metadata.namespace ?? '';
    const saName = secret.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] ?? '';
    const sa = this.api.store.get(this.serviceAccounts, namespace, saName);
    const wantedUid = secret.metadata.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION];
    if (!sa || (wantedUid && wantedUid !== sa.metadata.uid)) {
      this.api.delete(this.secrets, namespace, secret.metadata.name ?? '', { user: CONTROLLER_USER });
      return;
    }
    if (secretData(secret)['token']) {
      return;
    }
    const token = this.mint(namespace, secret.metadata.name ?? '', saName, sa.metadata.uid ?? '');
    const updated = cloneJson(secret);
    updated.metadata.annotations = { ...updated.metadata.annotations, [SERVICE_ACCOUNT_UID_ANNOTATION]: sa.metadata.uid ?? '' };
    updated['data'] = {
      ...(isJsonObject(updated['data']) ? updated['data'] : {}),
      token: Buffer.from(token).toString('base64'),
      'ca.crt': Buffer.from(this.caCertPem).toString('base64'),
      namespace: Buffer.from(namespace).toString('base64'),
    };
    this.api.store.replace(this.secrets, updated);
  }

  private mint(namespace: string, secretName: string, saName: string, saUid: string): string {
    const header = b64url(JSON.stringify({ alg: 'ES256', kid: 'kube-sim' }));
    const payload = b64url(
      JSON.stringify({
        iss: LEGACY_ISSUER,
        'kubernetes.io/serviceaccount/namespace': namespace,
        'kubernetes.io/serviceaccount/secret.name': secretName,
        'kubernetes.io/serviceaccount/service-account.name': saName,
        'kubernetes.io/serviceaccount/service-account.uid': saUid,
        sub: `system:serviceaccount:${namespace}:${saName}`,
      }),
    );
    const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${header}.${payload}.${b64url(signature)}`;
  }

  /** Resolves a legacy token to its ServiceAccount's user, or undefined. */
  readonly authenticate = (token: string): UserInfo | undefined => {
    const parts = token.split('.');
    if (parts.length !== 3) {
      return undefined;
    }
    const [header, payload, signature] = parts;
    if (!verify('sha256', Buffer.from(`${header}.${payload}`), { key: this.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))) {
      return undefined;
    }
    let claims: Record<string, unknown>;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    if (claims['iss'] !== LEGACY_ISSUER) {
      return undefined;
    }
    const namespace = String(claims['kubernetes.io/serviceaccount/namespace'] ?? '');
    const secret = this.api.store.get(this.secrets, namespace, String(claims['kubernetes.io/serviceaccount/secret.name'] ?? ''));
    const stored = secret ? Buffer.from(secretData(secret)['token'] ?? '') : Buffer.alloc(0);
    if (!secret || secret.metadata.deletionTimestamp || stored.length !== token.length || !timingSafeEqual(stored, Buffer.from(token))) {
      return undefined;
    }
    const name = String(claims['kubernetes.io/serviceaccount/service-account.name'] ?? '');
    const sa = this.api.store.get(this.serviceAccounts, namespace, name);
    if (!sa || sa.metadata.deletionTimestamp || sa.metadata.uid !== claims['kubernetes.io/serviceaccount/service-account.uid']) {
      return undefined;
    }
    return { username: `system:serviceaccount:${namespace}:${name}`, uid: sa.metadata.uid, groups: serviceAccountGroups(namespace) };
  };

  stop(): void {
    this.unsubscribe();
  }
}
