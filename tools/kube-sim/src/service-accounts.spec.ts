import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { apiFailure, eventually, kubeConfigFor, rawRequest } from './testing/kube-clients';

const ROLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-lister}
rules: [{apiGroups: [""], resources: [nodes], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-reader, namespace: apps}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]`;

describe('ServiceAccounts, legacy tokens and identities', () => {
  let sim: KubeSim;
  let core: CoreV1Api;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n' });
    core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('gives every namespace its default ServiceAccount and the cluster CA, also new ones', async () => {
    expect((await core.readNamespacedServiceAccount({ name: 'default', namespace: 'apps' })).metadata?.name).toBe('default');
    await core.createNamespace({ body: { metadata: { name: 'fresh' } } });
    expect((await core.readNamespacedServiceAccount({ name: 'default', namespace: 'fresh' })).metadata?.uid).toBeTruthy();
    expect((await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'fresh' })).data?.['ca.crt']).toBe(sim.caCertPem);
    await core.deleteNamespacedServiceAccount({ name: 'default', namespace: 'fresh' });
    await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: 'fresh' }).then(() => true, () => undefined));
  });

  it('fills a legacy token Secret, authenticates its token as the ServiceAccount, and drops both with it', async () => {
    await core.createNamespacedServiceAccount({ namespace: 'apps', body: { metadata: { name: 'robot' } } });
    expect(
      (await apiFailure(core.createNamespacedSecret({ namespace: 'apps', body: { metadata: { name: 'no-owner' }, type: 'kubernetes.io/service-account-token' } }))).status['message'],
    ).toBe('Secret "no-owner" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value');
    await core.createNamespacedSecret({ namespace: 'apps', body: { metadata: { name: 'robot-token', annotations: { 'kubernetes.io/service-account.name': 'robot' } }, type: 'kubernetes.io/service-account-token' } });
    const secret = await core.readNamespacedSecret({ name: 'robot-token', namespace: 'apps' });
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    expect(data['namespace']).toBe('apps');
    expect(data['ca.crt']).toBe(sim.caCertPem);
    expect(secret.metadata?.annotations?.['kubernetes.io/service-account.uid']).toBe((await core.readNamespacedServiceAccount({ name: 'robot', namespace: 'apps' })).metadata?.uid);
    const token = data['token'];
    const whoami = await rawRequest(sim, { method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', token, headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(JSON.parse(whoami.body)['status']['userInfo']).toMatchObject({ username: 'system:serviceaccount:apps:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'] });
    expect(JSON.parse((await rawRequest(sim, { path: '/api/v1/nodes', token })).body)['message']).toBe(
      'nodes is forbidden: User "system:serviceaccount:apps:robot" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    await core.deleteNamespacedServiceAccount({ name: 'robot', namespace: 'apps' });
    expect((await apiFailure(core.readNamespacedSecret({ name: 'robot-token', namespace: 'apps' }))).code).toBe(404);
    expect((await rawRequest(sim, { path: '/api/v1/nodes', token })).status).toBe(401);
  });

  it('creates an identity bound to role manifests and returns its kubeconfig', async () => {
    const identity = await sim.createIdentity({ roles: ROLE, serviceAccount: { namespace: 'apps', name: 'deployer' } });
    expect(identity.username).toBe('system:serviceaccount:apps:deployer');
    const asIdentity = kubeConfigFor(sim, identity.credentials as { token: string }).makeApiClient(CoreV1Api);
    expect((await asIdentity.listNode()).items).toEqual([]);
    expect((await apiFailure(asIdentity.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'default' }))).code).toBe(403);
    expect((await asIdentity.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'apps' })).data?.['ca.crt']).toBe(sim.caCertPem);
    const user = await sim.createIdentity({ roles: ROLE, user: { name: 'auditor', groups: ['audit'] } });
    expect(user.groups).toEqual(['audit', 'system:authenticated']);
    expect((await kubeConfigFor(sim, user.credentials as { certPem: string; keyPem: string }).makeApiClient(CoreV1Api).listNode()).items).toEqual([]);
  });
});

describe('kube-sim without the admin', () => {
  it('accepts no system:masters credential, and hands out the identity instead', async () => {
    const sim = await startKubeSim({ admin: false, identity: { roles: ROLE, serviceAccount: { namespace: 'apps', name: 'product' } } });
    try {
      expect(sim.adminKubeconfig).toBeUndefined();
      expect(sim.adminClientCert).toBeUndefined();
      expect(sim.adminToken).toBe('');
      expect((await rawRequest(sim, { path: '/api/v1/nodes', token: 'anything' })).status).toBe(401);
      expect(sim.identity?.username).toBe('system:serviceaccount:apps:product');
      const core = kubeConfigFor(sim, sim.identity?.credentials as { token: string }).makeApiClient(CoreV1Api);
      expect((await core.listNode()).items).toEqual([]);
      expect((await apiFailure(core.deleteCollectionNode())).status['message']).toBe(
        'nodes is forbidden: User "system:serviceaccount:apps:product" cannot deletecollection resource "nodes" in API group "" at the cluster scope',
      );
    } finally {
      await sim.stop();
    }
  });
});
