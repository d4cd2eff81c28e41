import { stringify } from 'yaml';
import { parseServiceAccountUsername } from './bootstrap-identity';

/** An RBAC rule as a Role or ClusterRole writes it. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * The roles of the service's account in a managed cluster: the ClusterRole, the Lease Role (in the
 * CSR approver's lease namespace), the Role that reads the `kubernetes` Service (in `default`) and
 * the bootstrap identities' Role (in the bootstrap namespace).
 */
export type ServiceRole = 'cluster' | 'leases' | 'apiService' | 'bootstrapIdentities';

/**
 * Every Kubernetes permission the service uses, by role: what deploy/base/rbac ships (a spec
 * compares the two, so they cannot drift apart) and what a cluster check asks the API server about.
 */
export const SERVICE_RULES: Readonly<Record<ServiceRole, readonly PolicyRule[]>> = {
  cluster: [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
    { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
    { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get'] },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['list'] },
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
    { apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving'], verbs: ['approve'] },
    { apiGroups: ['config.openshift.io'], resources: ['clusterversions'], resourceNames: ['version'], verbs: ['get'] },
  ],
  leases: [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['ccos-scaler-csr-approver'], verbs: ['get', 'update'] },
  ],
  apiService: [{ apiGroups: [''], resources: ['services'], resourceNames: ['kubernetes'], verbs: ['get'] }],
  bootstrapIdentities: [
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create', 'get', 'delete'] },
    { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
  ],
};

/** The namespaces the service's Roles apply in, from its configuration. */
export interface ServiceNamespaces {
  /** BOOTSTRAP_NAMESPACE. */
  readonly bootstrap: string;
  /** CSR_APPROVER_LEASE_NAMESPACE. */
  readonly leases: string;
}

/** The namespaces of a deployment with the defaults. */
export const DEFAULT_SERVICE_NAMESPACES: ServiceNamespaces = { bootstrap: 'ccos-scaler-bootstrap', leases: 'kube-system' };

/** One thing the service does, as a SelfSubjectAccessReview asks about it. */
export interface ServicePermission {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  /** Empty: any name. */
  readonly name: string;
  /** Empty: cluster-wide. */
  readonly namespace: string;
}

function namespaceOf(role: ServiceRole, namespaces: ServiceNamespaces): string {
  switch (role) {
    case 'cluster':
      return '';
    case 'leases':
      return namespaces.leases;
    case 'apiService':
      return 'default';
    case 'bootstrapIdentities':
      return namespaces.bootstrap;
  }
}

/** Every verb on every resource (and name) of {@link SERVICE_RULES}, where the service uses it. */
export function servicePermissions(namespaces: ServiceNamespaces): ServicePermission[] {
  const permissions: ServicePermission[] = [];
  for (const [role, rules] of Object.entries(SERVICE_RULES) as Array<[ServiceRole, readonly PolicyRule[]]>) {
    const namespace = namespaceOf(role, namespaces);
    for (const rule of rules) {
      for (const group of rule.apiGroups) {
        for (const resourcePath of rule.resources) {
          const [resource = '', subresource = ''] = resourcePath.split('/');
          for (const name of rule.resourceNames ?? ['']) {
            for (const verb of rule.verbs) {
              permissions.push({ verb, group, resource, subresource, name, namespace });
            }
          }
        }
      }
    }
  }
  return permissions;
}

/** A permission the way `kubectl auth can-i` takes it: `create pods/eviction`, `approve signers.certificates.k8s.io/kubernetes.io/kubelet-serving`, `get leases.coordination.k8s.io/x -n kube-system`. */
export function describePermission(permission: ServicePermission): string {
  const resource = `${permission.resource}${permission.group ? `.${permission.group}` : ''}`;
  const path = permission.subresource ? `${resource}/${permission.subresource}` : permission.name ? `${resource}/${permission.name}` : resource;
  return `${permission.verb} ${path}${permission.namespace ? ` -n ${permission.namespace}` : ''}`;
}

/** Who the service is in a cluster, as an RBAC subject. */
export type RbacSubject = { readonly kind: 'ServiceAccount'; readonly namespace: string; readonly name: string } | { readonly kind: 'User'; readonly name: string };

/** The service's account as deploy/base/rbac creates it. */
export const SHIPPED_SERVICE_SUBJECT: RbacSubject = { kind: 'ServiceAccount', namespace: 'ccos-scaler', name: 'ccos-scaler' };

const ROLE_NAME = 'ccos-scaler-bootstrap-identities';

/**
 * What a cluster needs before the service can mint install runs' bootstrap identities in
 * `namespace`: the namespace, the binding that lets its accounts file kubelet CSRs, the service's
 * Role there and its binding to `subject`. With the defaults it is deploy/base/rbac's
 * bootstrap-identities.yaml plus the RoleBinding of bindings.yaml (a spec checks so), as
 * multi-document YAML for `kubectl apply -f -`.
 */
export function bootstrapIdentitiesManifest(namespace: string, subject: RbacSubject = SHIPPED_SERVICE_SUBJECT): string {
  const documents = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${namespace}-node-bootstrapper` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `system:serviceaccounts:${namespace}` }],
    },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: ROLE_NAME, namespace }, rules: SERVICE_RULES.bootstrapIdentities.map(plainRule) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: ROLE_NAME, namespace, labels: { 'app.kubernetes.io/name': 'ccos-scaler' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ROLE_NAME },
      subjects: [subject.kind === 'ServiceAccount' ? { kind: 'ServiceAccount', name: subject.name, namespace: subject.namespace } : { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: subject.name }],
    },
  ];
  return documents.map((document) => stringify(document).trimEnd()).join('\n---\n') + '\n';
}

function plainRule(rule: PolicyRule): Record<string, unknown> {
  return { apiGroups: [...rule.apiGroups], resources: [...rule.resources], ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}), verbs: [...rule.verbs] };
}

/** The RBAC subject of a user name the API server reports: a ServiceAccount for `system:serviceaccount:<ns>:<name>`, a User otherwise. */
export function subjectOfUsername(username: string): RbacSubject {
  const account = parseServiceAccountUsername(username);
  return account ? { kind: 'ServiceAccount', ...account } : { kind: 'User', name: username };
}
