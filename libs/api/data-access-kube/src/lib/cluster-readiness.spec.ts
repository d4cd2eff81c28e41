import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { startKubeSim, type KubeSim } from '../testing/kube-sim-fixture';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '../testing/shipped-rbac';
import { ClusterAddressGuard } from './cluster-address';
import { readClusterReadiness } from './cluster-readiness';
import { createKubeClient, KubeApiError } from './kube-client';
import { DEFAULT_SERVICE_NAMESPACES, describePermission } from './service-permissions';

type Document = { kind: string; metadata: { name: string; namespace?: string }; rules?: Array<{ resources: string[]; verbs: string[] }> };

/** deploy/base/rbac's objects, changed by `edit` (which drops an object by answering null). */
function shippedRbacWith(edit: (object: Document) => Document | null): string {
  return parseAllDocuments(SHIPPED_RBAC)
    .map((document) => edit(document.toJS() as Document))
    .filter((object): object is Document => object !== null)
    .map((object) => stringify(object))
    .join('---\n');
}

const inBootstrapNamespace = (object: Document) => object.metadata.namespace === 'ccos-scaler-bootstrap' || (object.kind === 'Namespace' && object.metadata.name === 'ccos-scaler-bootstrap');

describe('readClusterReadiness', () => {
  let sim: KubeSim | undefined;
  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  const readAs = async (kubeconfig: (sim: KubeSim) => string, seed: string) => {
    sim = await startKubeSim({ seed });
    const client = createKubeClient({ addresses: ClusterAddressGuard.allowing('loopback'), apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: kubeconfig(sim) } });
    try {
      return await readClusterReadiness(client, DEFAULT_SERVICE_NAMESPACES);
    } finally {
      client.close();
    }
  };
  const denied = (readiness: Awaited<ReturnType<typeof readClusterReadiness>>) => readiness.permissions.filter((entry) => !entry.allowed).map((entry) => describePermission(entry.permission));

  it('finds everything in place on a cluster with the shipped RBAC, and leaves no account behind', async () => {
    const readiness = await readAs(shippedIdentityKubeconfig, SHIPPED_RBAC);
    expect(readiness.username).toBe('system:serviceaccount:ccos-scaler:ccos-scaler');
    expect(readiness.bootstrapNamespace).toEqual({ namespace: 'ccos-scaler-bootstrap', verdict: 'ready', detail: null });
    expect(denied(readiness)).toEqual([]);
    expect(readiness.permissions).toHaveLength(27);
    expect(readiness.runIdentities?.verdict).toBe('allowed');
    const admin = createKubeClient({ addresses: ClusterAddressGuard.allowing('loopback'), apiServerUrl: sim?.url ?? '', credentials: { kind: 'KUBECONFIG', kubeconfig: sim?.kubeconfig ?? '' } });
    const accounts = await admin.call('list', (o) => admin.core.listNamespacedServiceAccount({ namespace: 'ccos-scaler-bootstrap' }, o));
    admin.close();
    expect(accounts.items.map((account) => account.metadata?.name).filter((name) => name?.startsWith('ccos-scaler-check'))).toEqual([]);
  });

  it('says the namespace is missing when the credentials could create accounts anywhere (an admin kubeconfig)', async () => {
    const readiness = await readAs((s) => s.kubeconfig, shippedRbacWith((object) => (inBootstrapNamespace(object) ? null : object)));
    expect(readiness.bootstrapNamespace).toMatchObject({ namespace: 'ccos-scaler-bootstrap', verdict: 'missing', detail: 'namespaces "ccos-scaler-bootstrap" not found' });
  });

  it('says the service may not mint identities when the namespace and its Role are missing', async () => {
    const readiness = await readAs(shippedIdentityKubeconfig, shippedRbacWith((object) => (inBootstrapNamespace(object) ? null : object)));
    expect(readiness.bootstrapNamespace.verdict).toBe('forbidden');
    expect(readiness.runIdentities).toBeNull();
    expect(denied(readiness)).toEqual([
      'create serviceaccounts -n ccos-scaler-bootstrap',
      'get serviceaccounts -n ccos-scaler-bootstrap',
      'delete serviceaccounts -n ccos-scaler-bootstrap',
      'create serviceaccounts/token -n ccos-scaler-bootstrap',
    ]);
  });

  it('names the one verb the ClusterRole lacks', async () => {
    const seed = shippedRbacWith((object) =>
      object.kind === 'ClusterRole' ? { ...object, rules: object.rules?.map((rule) => (rule.resources.includes('pods/eviction') ? { ...rule, verbs: ['get'] } : rule)) } : object,
    );
    const readiness = await readAs(shippedIdentityKubeconfig, seed);
    expect(denied(readiness)).toEqual(['create pods/eviction']);
    expect(readiness.bootstrapNamespace.verdict).toBe('ready');
  });

  it('says the run identities may not file CSRs without the binding to system:node-bootstrapper, and leaves no account behind', async () => {
    const readiness = await readAs(shippedIdentityKubeconfig, shippedRbacWith((object) => (object.kind === 'ClusterRoleBinding' && object.metadata.name === 'ccos-scaler-bootstrap-node-bootstrapper' ? null : object)));
    expect(readiness.bootstrapNamespace.verdict).toBe('ready');
    expect(denied(readiness)).toEqual([]);
    expect(readiness.runIdentities?.verdict).toBe('denied');
    const admin = createKubeClient({ addresses: ClusterAddressGuard.allowing('loopback'), apiServerUrl: sim?.url ?? '', credentials: { kind: 'KUBECONFIG', kubeconfig: sim?.kubeconfig ?? '' } });
    const accounts = await admin.call('list', (o) => admin.core.listNamespacedServiceAccount({ namespace: 'ccos-scaler-bootstrap' }, o));
    admin.close();
    expect(accounts.items.filter((account) => account.metadata?.name?.startsWith('ccos-scaler-check'))).toEqual([]);
  });

  it('throws when the API server refuses the credentials', async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    const client = createKubeClient({ addresses: ClusterAddressGuard.allowing('loopback'), apiServerUrl: sim.url, credentials: { kind: 'TOKEN', token: 'not-a-token', caCert: sim.caCertPem } });
    await expect(readClusterReadiness(client, DEFAULT_SERVICE_NAMESPACES)).rejects.toMatchObject({ constructor: KubeApiError, statusCode: 401 });
    client.close();
  });
});
