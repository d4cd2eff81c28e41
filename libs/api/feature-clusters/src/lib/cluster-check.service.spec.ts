import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type Database, ClusterStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { ClusterAddressGuard, DEFAULT_SERVICE_NAMESPACES } from '@ccos/api/data-access-kube';
import { type KubeSim, SHIPPED_RBAC, shippedIdentityKubeconfig, startKubeSim } from '@ccos/api/data-access-kube/testing';
import { appErrorOf } from '@ccos/api/util-graphql/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import { APPLY_SHIPPED_RBAC, ClusterCheckService } from './cluster-check.service';
import { ClusterService } from './cluster.service';

type KubeObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

const objectsOf = (manifest: string): KubeObject[] => parseAllDocuments(manifest).map((document) => document.toJS() as KubeObject);
const inBootstrapNamespace = (object: KubeObject) => object.metadata.namespace === 'ccos-scaler-bootstrap' || (object.kind === 'Namespace' && object.metadata.name === 'ccos-scaler-bootstrap');

/** A cluster that got the shipped RBAC but for the bootstrap namespace, checked as the service's own account. */
describe('cluster readiness checks', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let sim: KubeSim;
  let clusters: ClusterService;
  let checks: ClusterCheckService;
  let counter = 0;

  beforeAll(async () => {
    database = await createTestDatabase('ccos_cluster_check');
    dataSource = await openDatabase({ url: database.url, maxConnections: 3 });
    sim = await startKubeSim({ seed: objectsOf(SHIPPED_RBAC).filter((object) => !inBootstrapNamespace(object)) });
    clusters = new ClusterService(new ClusterStore(dataSource), new SecretBox('cluster-check-spec-secret-key-0123456789'), () => undefined, ClusterAddressGuard.allowing('loopback'));
    checks = new ClusterCheckService(clusters, DEFAULT_SERVICE_NAMESPACES);
  });
  afterAll(async () => {
    await sim?.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  const register = (credentials: { kubeconfig: string } | { token: string; caCert: string }) =>
    clusters.register({
      name: `checked-${++counter}`,
      apiServerUrl: sim.url,
      vip: '127.0.0.1',
      kubeconfig: null,
      token: null,
      caCert: null,
      ...credentials,
      csrAutoApprove: false,
      bootstrapStyle: 'OPENSHIFT',
      allowInsecureTransport: false,
      machineConfigCaCert: null,
    });

  it('finds the missing namespace and permissions, refuses installs until the fix it names is applied, then lets them go at once', async () => {
    const cluster = await register({ kubeconfig: shippedIdentityKubeconfig(sim) });
    // Never checked: installs are not held up (and the cluster's API server is not asked).
    await checks.requireReady(cluster.id);
    expect((await clusters.get(cluster.id)).readinessFailing).toBeNull();

    // Two callers at once share one check.
    const [first, second] = await Promise.all([checks.check(cluster.id), checks.check(cluster.id)]);
    expect(second).toBe(first);
    expect(first.map((check) => [check.name, check.ok])).toEqual([
      ['API_ACCESS', true],
      ['BOOTSTRAP_NAMESPACE', false],
      ['SERVICE_PERMISSIONS', false],
    ]);
    const [access, bootstrap, permissions] = first;
    expect(access?.reason).toMatchObject({ code: 'clusterCheck.apiAccess.ok', params: { who: 'system:serviceaccount:ccos-scaler:ccos-scaler' } });
    expect(bootstrap?.reason).toMatchObject({ code: 'clusterCheck.bootstrap.forbidden', params: { namespace: 'ccos-scaler-bootstrap' } });
    expect(permissions?.reason).toMatchObject({ code: 'clusterCheck.permissions.missing', params: { count: 4 } });
    expect(permissions?.fix).toBe(APPLY_SHIPPED_RBAC);
    expect((await clusters.get(cluster.id)).readinessFailing).toEqual(['BOOTSTRAP_NAMESPACE', 'SERVICE_PERMISSIONS']);

    const refused = await appErrorOf(checks.requireReady(cluster.id));
    expect(refused.code).toBe('FAILED_PRECONDITION');
    expect(refused.extensions).toMatchObject({ messageCode: 'install.clusterNotReady', failing: ['BOOTSTRAP_NAMESPACE', 'SERVICE_PERMISSIONS'] });

    // The operator applies exactly the manifest the check gave, as the cluster's admin (`kubectl apply`: what exists stays).
    const fix = objectsOf(bootstrap?.fix ?? '');
    expect(fix.map((object) => object.kind)).toContain('Namespace');
    for (const object of fix) {
      const resource = sim.resource(`${object.kind.toLowerCase()}s`);
      if (!sim.store.get(resource, object.metadata.namespace, object.metadata.name)) {
        sim.api.seed(resource, object as never);
      }
    }
    await checks.requireReady(cluster.id);
    expect((await clusters.get(cluster.id)).readinessFailing).toEqual([]);
    const after = await checks.check(cluster.id);
    expect(after.every((check) => check.ok && check.fix === null)).toBe(true);
    expect(after.map((check) => check.name)).toContain('RUN_IDENTITIES_FILE_CSRS');
  });

  it('answers API_ACCESS failed for credentials the API server refuses, and CLUSTER_UNREACHABLE for the manifest, without the token', async () => {
    const token = 'refused-token-0123456789-abcdefghijklmnop';
    const cluster = await register({ token, caCert: sim.caCertPem });
    const [only, ...none] = await checks.check(cluster.id);
    expect(none).toEqual([]);
    expect(only).toMatchObject({ name: 'API_ACCESS', ok: false, reason: { code: 'clusterCheck.apiAccess.failed' }, fix: null });
    expect(JSON.stringify(only)).not.toContain(token);
    const unreachable = await appErrorOf(checks.bootstrapManifest(cluster.id));
    expect(unreachable.code).toBe('CLUSTER_UNREACHABLE');
    expect(unreachable.message).not.toContain(token);
    expect((await appErrorOf(checks.requireReady(cluster.id))).extensions).toMatchObject({ failing: ['API_ACCESS'] });
  });
});
