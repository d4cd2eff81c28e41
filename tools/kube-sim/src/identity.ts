import { readFile } from 'node:fs/promises';
import { ApiError } from './api-error';
import type { KeyPairPem } from './certificate-authority';
import type { KubeObject } from './kube-object';
import type { KubeconfigCredentials } from './kubeconfig';
import type { ObjectApi } from './object-api';
import { resourceForKind } from './resource-registry';
import { secretData } from './resources/secrets';
import { parseSeed, type SeedInput } from './seed';
import { SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_TOKEN_TYPE, serviceAccountGroups } from './service-accounts';
import type { UserInfo } from './user-info';

/** Who {@link createIdentity} makes and what it may do. */
export interface IdentityOptions {
  /** ClusterRole and Role manifests (multi-document YAML or objects); each is created (or replaced) and bound to the identity. */
  roles?: SeedInput;
  /** Files with such manifests, e.g. the product's `deploy/base/rbac/*.yaml`. */
  roleFiles?: readonly string[];
  /** A ServiceAccount identity with a legacy token Secret (the default: `kube-sim-identity` in `default`), created when missing. */
  serviceAccount?: { namespace: string; name: string };
  /** Instead, a user with a client certificate from the simulator's CA (CN = name, O = groups). */
  user?: { name: string; groups?: string[] };
}

/** An identity and the kubeconfig that authenticates as it. */
export interface Identity {
  username: string;
  groups: string[];
  credentials: KubeconfigCredentials;
  kubeconfig: string;
}

/** What createIdentity needs of the running simulator. */
export interface IdentityContext {
  api: ObjectApi;
  /** The cluster admin that sets the identity up (in-process, like `kubectl apply` by an administrator). */
  admin: UserInfo;
  issueClientCertificate(username: string, groups: string[]): Promise<KeyPairPem>;
  kubeconfigFor(credentials: KubeconfigCredentials, userName?: string): string;
}

const DEFAULT_SERVICE_ACCOUNT = { namespace: 'default', name: 'kube-sim-identity' };

function createOrReplace(ctx: IdentityContext, obj: KubeObject): KubeObject {
  const def = resourceForKind(String(obj.apiVersion ?? ''), String(obj.kind ?? ''), ctx.api.store.definitions);
  if (!def) {
    throw new Error(`identity: kind ${String(obj.kind)} of apiVersion ${String(obj.apiVersion)} is not served by kube-sim`);
  }
  const namespace = def.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
  const existing = ctx.api.store.get(def, namespace, obj.metadata.name ?? '');
  if (existing) {
    return ctx.api.update(def, namespace, existing.metadata.name ?? '', { ...obj, metadata: { ...obj.metadata, resourceVersion: existing.metadata.resourceVersion } }, { user: ctx.admin });
  }
  return ctx.api.create(def, namespace, obj, { user: ctx.admin });
}

function bindingName(role: string, identity: string): string {
  return `${role}:${identity}`.replace(/[^a-z0-9.:-]/g, '-');
}

/**
 * Creates an identity bound to the given ClusterRoles and Roles — a ServiceAccount with a legacy
 * token (default) or a certificate user — and returns its kubeconfig: what a cluster administrator
 * does to deploy a component with its least-privilege role, done in-process as the admin.
 */
export async function createIdentity(ctx: IdentityContext, options: IdentityOptions): Promise<Identity> {
  const manifests: KubeObject[] = [...(options.roles !== undefined ? parseSeed(options.roles) : [])];
  for (const file of options.roleFiles ?? []) {
    manifests.push(...parseSeed(await readFile(file, 'utf8')));
  }
  const roles = manifests.filter((m) => m.apiVersion === 'rbac.authorization.k8s.io/v1' && (m.kind === 'ClusterRole' || m.kind === 'Role'));
  if (roles.length !== manifests.length) {
    const other = manifests.find((m) => !roles.includes(m));
    throw new Error(`identity: only rbac.authorization.k8s.io/v1 ClusterRoles and Roles can be bound, not ${String(other?.apiVersion)} ${String(other?.kind)}`);
  }
  let username: string;
  let groups: string[];
  let subject: Record<string, string>;
  let credentials: KubeconfigCredentials;
  if (options.user) {
    username = options.user.name;
    groups = [...(options.user.groups ?? [])];
    subject = { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: username };
    credentials = await ctx.issueClientCertificate(username, groups);
  } else {
    const sa = options.serviceAccount ?? DEFAULT_SERVICE_ACCOUNT;
    username = `system:serviceaccount:${sa.namespace}:${sa.name}`;
    groups = serviceAccountGroups(sa.namespace);
    subject = { kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace };
    const nsDef = ctx.api.resource('', 'v1', 'namespaces');
    if (!ctx.api.store.get(nsDef, undefined, sa.namespace)) {
      ctx.api.create(nsDef, undefined, { metadata: { name: sa.namespace } }, { user: ctx.admin });
    }
    const saDef = ctx.api.resource('', 'v1', 'serviceaccounts');
    if (!ctx.api.store.get(saDef, sa.namespace, sa.name)) {
      ctx.api.create(saDef, sa.namespace, { metadata: { name: sa.name } }, { user: ctx.admin });
    }
    const secrets = ctx.api.resource('', 'v1', 'secrets');
    const secretName = `${sa.name}-token`;
    try {
      ctx.api.create(secrets, sa.namespace, { metadata: { name: secretName, annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: sa.name } }, type: SERVICE_ACCOUNT_TOKEN_TYPE }, { user: ctx.admin });
    } catch (error) {
      if (!(error instanceof ApiError && error.status.code === 409)) {
        throw error;
      }
    }
    const secret = ctx.api.store.get(secrets, sa.namespace, secretName);
    const token = secret ? secretData(secret)['token'] : undefined;
    if (!token) {
      throw new Error(`identity: the token controller did not fill ${sa.namespace}/${secretName}`);
    }
    credentials = { token };
  }
  const shortName = username.replace(/^system:serviceaccount:/, '');
  for (const role of roles) {
    const stored = createOrReplace(ctx, role);
    const roleName = stored.metadata.name ?? '';
    const binding: KubeObject =
      role.kind === 'ClusterRole'
        ? { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: bindingName(roleName, shortName) } }
        : { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: bindingName(roleName, shortName), namespace: stored.metadata.namespace } };
    binding['roleRef'] = { apiGroup: 'rbac.authorization.k8s.io', kind: role.kind, name: roleName };
    binding['subjects'] = [subject];
    createOrReplace(ctx, binding);
  }
  return { username, groups: [...groups, 'system:authenticated'], credentials, kubeconfig: ctx.kubeconfigFor(credentials, shortName) };
}
