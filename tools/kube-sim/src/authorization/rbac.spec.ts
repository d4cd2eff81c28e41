import { AuthorizationV1Api, CertificatesV1Api, CoordinationV1Api, CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest } from '../certificate-request';
import { startKubeSim, type KubeSim } from '../kube-sim';
import { apiFailure, kubeConfigFor, rawRequest } from '../testing/kube-clients';

const ADMIN = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };

/** alice reads pods in team-a (Role), reads nodes everywhere (ClusterRole), and may scale deployments by name. */
const SEED = `
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team-a}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: [apps], resources: ["*/scale"], resourceNames: [web], verbs: [update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-reads-pods, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-reader}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ops-read-nodes}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: ops}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dangling}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: does-not-exist}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
---
apiVersion: v1
kind: Secret
metadata: {name: used-by-n1, namespace: team-a}
---
apiVersion: v1
kind: Secret
metadata: {name: unrelated, namespace: team-a}
---
apiVersion: v1
kind: Pod
metadata: {name: on-n1, namespace: team-a}
spec: {nodeName: n1, volumes: [{name: s, secret: {secretName: used-by-n1}}], containers: [{name: c, image: x}]}
`;

describe('RBAC, the Node authorizer and their admission plugins', () => {
  let sim: KubeSim;
  let alice: { certPem: string; keyPem: string };
  let node1: { certPem: string; keyPem: string };

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SEED });
    alice = await sim.issueClientCertificate('alice', ['ops']);
    node1 = await sim.issueClientCertificate('system:node:n1', ['system:nodes']);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('answers a refused request with the Forbidden Status of the real API server', async () => {
    const core = kubeConfigFor(sim, alice).makeApiClient(CoreV1Api);
    expect((await core.listNamespacedPod({ namespace: 'team-a' })).items.map((p) => p.metadata?.name)).toEqual(['on-n1']);
    expect(await apiFailure(core.listNamespacedPod({ namespace: 'team-b' }))).toEqual({
      code: 403,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"',
        reason: 'Forbidden',
        details: { kind: 'pods' },
        code: 403,
      },
    });
    expect((await apiFailure(core.deleteNamespacedPod({ name: 'on-n1', namespace: 'team-a' }))).status).toMatchObject({
      message: 'pods "on-n1" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team-a"',
      details: { name: 'on-n1', kind: 'pods' },
    });
    expect((await apiFailure(core.createNamespacedPodEviction({ name: 'on-n1', namespace: 'team-a', body: { metadata: { name: 'on-n1' } } }))).status['message']).toBe(
      'pods "on-n1" is forbidden: User "alice" cannot create resource "pods/eviction" in API group "" in the namespace "team-a"',
    );
    expect((await apiFailure(core.deleteNode({ name: 'n2' }))).status['message']).toBe('nodes "n2" is forbidden: User "alice" cannot delete resource "nodes" in API group "" at the cluster scope');
    expect((await core.readNode({ name: 'n2' })).metadata?.name).toBe('n2');
    const raw = await rawRequest(sim, { path: '/metrics', cert: alice });
    expect(JSON.parse(raw.body)).toMatchObject({ code: 403, message: 'forbidden: User "alice" cannot get path "/metrics"' });
  });

  it('matches resource names, subresource wildcards and reports bindings to missing roles', async () => {
    const review = async (user: string, groups: string[], attrs: Record<string, string>) => {
      const auth = kubeConfigFor(sim).makeApiClient(AuthorizationV1Api);
      return (await auth.createSubjectAccessReview({ body: { spec: { user, groups, resourceAttributes: attrs } } })).status;
    };
    expect(await review('alice', [], { namespace: 'team-a', verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', name: 'web' })).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "alice-reads-pods/team-a" of Role "pod-reader" to User "alice"',
    });
    expect((await review('alice', [], { namespace: 'team-a', verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', name: 'api' }))?.allowed).toBe(false);
    expect((await review('alice', [], { namespace: 'team-a', verb: 'update', group: 'apps', resource: 'deployments', name: 'web' }))?.allowed).toBe(false);
    expect(await review('carol', ['ops'], { verb: 'watch', resource: 'nodes' })).toEqual({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "ops-read-nodes" of ClusterRole "node-reader" to Group "ops"' });
    expect(await review('bob', [], { verb: 'get', resource: 'nodes' })).toEqual({ allowed: false, reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "does-not-exist" not found' });
  });

  it('prevents escalation: roles only with rules held, bindings only to roles held or with bind', async () => {
    const adminRbac = kubeConfigFor(sim).makeApiClient(RbacAuthorizationV1Api);
    await adminRbac.createNamespacedRole({
      namespace: 'team-a',
      body: { metadata: { name: 'rbac-manager' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'update'] }] },
    });
    await adminRbac.createNamespacedRoleBinding({
      namespace: 'team-a',
      body: { metadata: { name: 'alice-manages-rbac' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rbac-manager' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] },
    });
    const rbac = kubeConfigFor(sim, alice).makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace: 'team-a', body: { metadata: { name: 'reader-copy' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
    const escalation = await apiFailure(rbac.createNamespacedRole({ namespace: 'team-a', body: { metadata: { name: 'deleter' }, rules: [{ apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'delete'] }] } }));
    expect(escalation.code).toBe(403);
    expect(escalation.status['message']).toBe(
      'roles.rbac.authorization.k8s.io "deleter" is forbidden: user "alice" (groups=["ops" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    );
    const binding = (name: string, role: string) => ({ metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }] });
    await rbac.createNamespacedRoleBinding({ namespace: 'team-a', body: binding('mallory-reads-nodes', 'node-reader') });
    expect((await apiFailure(rbac.createNamespacedRoleBinding({ namespace: 'team-a', body: binding('mallory-admin', 'admin') }))).status['message']).toContain(
      'rolebindings.rbac.authorization.k8s.io "mallory-admin" is forbidden: user "alice" (groups=["ops" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
    );
    await adminRbac.createNamespacedRole({ namespace: 'team-a', body: { metadata: { name: 'binder' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['admin'], verbs: ['bind'] }] } });
    await adminRbac.createNamespacedRoleBinding({
      namespace: 'team-a',
      body: { metadata: { name: 'alice-binds-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'binder' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] },
    });
    await rbac.createNamespacedRoleBinding({ namespace: 'team-a', body: binding('mallory-admin', 'admin') });
  });

  it('aggregates labelled ClusterRoles into admin, edit and view', async () => {
    const rbac = kubeConfigFor(sim).makeApiClient(RbacAuthorizationV1Api);
    const view = await rbac.readClusterRole({ name: 'view' });
    expect(view.rules?.some((r) => r.resources?.includes('pods') && r.verbs.includes('list'))).toBe(true);
    expect(view.rules?.some((r) => r.resources?.includes('widgets'))).toBe(false);
    await rbac.createClusterRole({ body: { metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }] } });
    for (const name of ['view', 'edit', 'admin']) {
      expect((await rbac.readClusterRole({ name })).rules?.some((r) => r.resources?.includes('widgets')), name).toBe(true);
    }
  });

  it('lets a node read only the secrets of its pods and write only itself and its own Lease', async () => {
    const core = kubeConfigFor(sim, node1).makeApiClient(CoreV1Api);
    expect((await core.readNamespacedSecret({ name: 'used-by-n1', namespace: 'team-a' })).metadata?.name).toBe('used-by-n1');
    expect((await apiFailure(core.readNamespacedSecret({ name: 'unrelated', namespace: 'team-a' }))).status['message']).toBe(
      `secrets "unrelated" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "team-a": no relationship found between node 'n1' and this object`,
    );
    expect((await apiFailure(core.patchNodeStatus({ name: 'n2', body: { status: { phase: 'Running' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)))).status['message']).toBe('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    const leases = kubeConfigFor(sim, node1).makeApiClient(CoordinationV1Api);
    await leases.createNamespacedLease({ namespace: 'kube-node-lease', body: { metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', renewTime: new V1MicroTime() } } });
    sim.api.create(sim.resource('leases'), 'kube-node-lease', { metadata: { name: 'n2' }, spec: { holderIdentity: 'n2' } }, { user: ADMIN });
    expect((await apiFailure(leases.readNamespacedLease({ name: 'n2', namespace: 'kube-node-lease' }))).status['message']).toBe(
      'leases.coordination.k8s.io "n2" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node',
    );
  });

  it('approving or denying a CSR needs approve on its signer (or the signer domain wildcard)', async () => {
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:n9', organizations: ['system:nodes'] });
    const admin = kubeConfigFor(sim).makeApiClient(CertificatesV1Api);
    const created = await admin.createCertificateSigningRequest({
      body: { metadata: { name: 'n9-client' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } },
    });
    const rbac = kubeConfigFor(sim).makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: 'csr-approval-only' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval'], verbs: ['get', 'update'] }] } });
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: 'approver-without-signer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-approval-only' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'approvers' }] },
    });
    const approver = kubeConfigFor(sim, await sim.issueClientCertificate('approver', ['approvers'])).makeApiClient(CertificatesV1Api);
    const approve = () =>
      approver.replaceCertificateSigningRequestApproval({
        name: 'n9-client',
        body: { ...created, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok', lastUpdateTime: new Date() }] } },
      });
    expect((await apiFailure(approve())).status).toMatchObject({
      code: 403,
      message: 'certificatesigningrequests.certificates.k8s.io "n9-client" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client-kubelet"',
    });
    await rbac.createClusterRole({ body: { metadata: { name: 'approve-kubernetes-io' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/*'], verbs: ['approve'] }] } });
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: 'approvers-sign-kubernetes-io' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'approve-kubernetes-io' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'approvers' }] },
    });
    expect((await approve()).status?.conditions?.[0].type).toBe('Approved');
  });

  it('authorizes impersonation with the impersonate verb', async () => {
    const asAlice = (headers: Record<string, string>) => rawRequest(sim, { path: '/api/v1/nodes', cert: alice, headers });
    expect(JSON.parse((await asAlice({ 'Impersonate-User': 'root' })).body)['message']).toBe('users "root" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
    const sa = await asAlice({ 'Impersonate-User': 'system:serviceaccount:team-a:builder' });
    expect(JSON.parse(sa.body)['message']).toBe('serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"');
    const whoami = await rawRequest(sim, { method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', headers: { 'Impersonate-User': 'system:serviceaccount:team-a:builder', 'Content-Type': 'application/json' }, body: '{}' });
    expect(JSON.parse(whoami.body)['status']).toEqual({ userInfo: { username: 'system:serviceaccount:team-a:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'] } });
  });
});
