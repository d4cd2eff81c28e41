import type { KubeObject } from '../kube-object';
import type { PolicyRule } from './policy-rule';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC_API = `${RBAC_GROUP}/v1`;
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const AGGREGATE = (to: string): string => `rbac.authorization.k8s.io/aggregate-to-${to}`;

/** The group of kubeadm's default node bootstrap tokens. */
export const KUBEADM_NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({ verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) });
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

function meta(name: string, labels: Record<string, string> = {}): KubeObject['metadata'] {
  return {
    name,
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...labels },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  };
}

function clusterRole(name: string, rules: PolicyRule[], labels?: Record<string, string>): KubeObject {
  return { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: meta(name, labels), rules };
}

function aggregated(name: string, to: string, labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: RBAC_API,
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [AGGREGATE(to)]: 'true' } }] },
    rules: [],
  };
}

function binding(name: string, role: string, subjects: { kind: 'Group' | 'User'; name: string }[], bootstrapping = true): KubeObject {
  return {
    apiVersion: RBAC_API,
    kind: 'ClusterRoleBinding',
    metadata: bootstrapping ? meta(name) : { name },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects: subjects.map((s) => ({ apiGroup: RBAC_GROUP, ...s })),
  };
}

function withoutSubjects(obj: KubeObject): KubeObject {
  const { subjects: _subjects, ...rest } = obj;
  return rest as KubeObject;
}

const approver = (signer: string): PolicyRule[] => [r(['approve'], ['certificates.k8s.io'], ['signers'], [signer])];

/**
 * The default ClusterRoles of a 1.32 API server that matter for the resources kube-sim serves
 * (bootstrappolicy.ClusterRoles, reduced to those resources), with the aggregated admin/edit/view.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/#default-roles-and-role-bindings
 */
export function defaultClusterRoles(): KubeObject[] {
  return [
    clusterRole('cluster-admin', [r(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('system:discovery', [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'])]),
    clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    clusterRole('system:monitoring', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])]),
    clusterRole('system:basic-user', [
      r(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      r(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:service-account-issuer-discovery', [urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/'])]),
    clusterRole('system:auth-delegator', [r(['create'], ['authentication.k8s.io'], ['tokenreviews']), r(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])]),
    aggregated('admin', 'admin'),
    aggregated('edit', 'edit', { [AGGREGATE('admin')]: 'true' }),
    aggregated('view', 'view', { [AGGREGATE('edit')]: 'true' }),
    clusterRole(
      'system:aggregate-to-admin',
      [r(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']), r([...WRITE, ...READ].sort(), [RBAC_GROUP], ['rolebindings', 'roles'])],
      { [AGGREGATE('admin')]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        r(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
        r(['create'], [''], ['pods/eviction']),
        r(WRITE, [''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy']),
        r(['create'], [''], ['serviceaccounts/token']),
        r(WRITE, ['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale']),
        r(WRITE, ['policy'], ['poddisruptionbudgets']),
        r(READ, [''], ['secrets']),
        r(['impersonate'], [''], ['serviceaccounts']),
      ],
      { [AGGREGATE('edit')]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        r(READ, [''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status']),
        r(READ, [''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
        r(READ, [''], ['namespaces']),
        r(READ, ['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
        r(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        r(READ, ['coordination.k8s.io'], ['leases']),
      ],
      { [AGGREGATE('view')]: 'true' },
    ),
    clusterRole('system:node', [
      r(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      r(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews', 'subjectaccessreviews']),
      r(READ, [''], ['services']),
      r(['create', 'get', 'list', 'watch'], [''], ['nodes']),
      r(['patch', 'update'], [''], ['nodes/status']),
      r(['patch', 'update'], [''], ['nodes']),
      r(['create', 'patch', 'update'], [''], ['events']),
      r(READ, [''], ['pods']),
      r(['create', 'delete'], [''], ['pods']),
      r(['patch', 'update'], [''], ['pods/status']),
      r(['create'], [''], ['pods/eviction']),
      r(READ, [''], ['configmaps', 'secrets']),
      r(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
      r(['get'], [''], ['endpoints']),
      r(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
      r(['create', 'delete', 'get', 'patch', 'update'], ['coordination.k8s.io'], ['leases']),
      r(['create'], [''], ['serviceaccounts/token']),
    ]),
    clusterRole('system:node-bootstrapper', [r(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests'])]),
    clusterRole('system:node-proxier', [r(['list', 'watch'], [''], ['endpoints', 'services']), r(READ, [''], ['nodes']), r(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events'])]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [r(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/nodeclient'])]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [r(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient'])]),
    clusterRole('system:certificates.k8s.io:kube-apiserver-client-approver', approver('kubernetes.io/kube-apiserver-client')),
    clusterRole('system:certificates.k8s.io:kube-apiserver-client-kubelet-approver', approver('kubernetes.io/kube-apiserver-client-kubelet')),
    clusterRole('system:certificates.k8s.io:kubelet-serving-approver', approver('kubernetes.io/kubelet-serving')),
    clusterRole('system:certificates.k8s.io:legacy-unknown-approver', approver('kubernetes.io/legacy-unknown')),
  ];
}

/** The API server's default ClusterRoleBindings (bootstrappolicy.ClusterRoleBindings) for those roles. */
export function defaultClusterRoleBindings(): KubeObject[] {
  return [
    binding('cluster-admin', 'cluster-admin', [{ kind: 'Group', name: 'system:masters' }]),
    binding('system:discovery', 'system:discovery', [{ kind: 'Group', name: 'system:authenticated' }]),
    binding('system:basic-user', 'system:basic-user', [{ kind: 'Group', name: 'system:authenticated' }]),
    binding('system:public-info-viewer', 'system:public-info-viewer', [
      { kind: 'Group', name: 'system:authenticated' },
      { kind: 'Group', name: 'system:unauthenticated' },
    ]),
    binding('system:monitoring', 'system:monitoring', [{ kind: 'Group', name: 'system:monitoring' }]),
    binding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [{ kind: 'Group', name: 'system:serviceaccounts' }]),
    // Since 1.8 the system:node binding has no subjects: the Node authorizer decides for kubelets.
    withoutSubjects(binding('system:node', 'system:node', [])),
    binding('system:node-proxier', 'system:node-proxier', [{ kind: 'User', name: 'system:kube-proxy' }]),
  ];
}

/**
 * What `kubeadm init` adds so that kubelets can join with a bootstrap token: CSR creation and the
 * node-reading role for the default node token group, and the bindings kube-controller-manager's
 * CSR approver reads (kube-sim runs no such approver; the bindings are there as on a real cluster).
 * @see https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/#authorize-kubelet-to-create-csr
 */
export function kubeadmBootstrapPolicy(): KubeObject[] {
  return [
    { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: { name: 'kubeadm:get-nodes' }, rules: [r(['get'], [''], ['nodes'])] },
    binding('kubeadm:get-nodes', 'kubeadm:get-nodes', [{ kind: 'Group', name: KUBEADM_NODE_TOKEN_GROUP }], false),
    binding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', [{ kind: 'Group', name: KUBEADM_NODE_TOKEN_GROUP }], false),
    binding('kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', [{ kind: 'Group', name: KUBEADM_NODE_TOKEN_GROUP }], false),
    binding('kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [{ kind: 'Group', name: 'system:nodes' }], false),
  ];
}
