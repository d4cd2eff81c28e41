import { KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { ClusterBootstrapManifestDocument, ClusterChecksDocument, RegisterClusterDocument } from '@ccos/shared/api-schema';
import { formatServerText } from '@ccos/shared/messages';
// The clusters of these tests are in-process Kubernetes API simulators (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

type RbacObject = { kind: string; metadata: { name: string; namespace?: string }; rules?: Array<{ resources: string[]; verbs: string[] }> };

/** deploy/base/rbac with `edit` applied to each object (null drops it). */
function shippedRbacWith(edit: (object: RbacObject) => RbacObject | null): string {
  return parseAllDocuments(SHIPPED_RBAC)
    .map((document) => edit(document.toJS() as RbacObject))
    .filter((object): object is RbacObject => object !== null)
    .map((object) => stringify(object))
    .join('---\n');
}

const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';
const withoutBootstrapNamespace = (object: RbacObject) => (object.metadata.namespace === BOOTSTRAP_NAMESPACE || (object.kind === 'Namespace' && object.metadata.name === BOOTSTRAP_NAMESPACE) ? null : object);
const withoutEvictions = (object: RbacObject) =>
  object.kind === 'ClusterRole' ? { ...object, rules: object.rules?.map((rule) => (rule.resources.includes('pods/eviction') ? { ...rule, verbs: ['get'] } : rule)) } : object;

/** `kubectl apply -f -` of a manifest, as the cluster's admin: what exists already stays as it is. */
async function applyAsAdmin(sim: KubeSim, manifest: string): Promise<void> {
  const config = new KubeConfig();
  config.loadFromString(sim.kubeconfig);
  const objects = KubernetesObjectApi.makeApiClient(config);
  for (const document of parseAllDocuments(manifest)) {
    await objects.create(document.toJS() as KubernetesObject).catch((error: unknown) => {
      if ((error as { code?: number }).code !== 409) {
        throw error;
      }
    });
  }
}

describe('clusterChecks: is a cluster ready for installs', () => {
  let harness: ApiHarness;
  const sims: KubeSim[] = [];
  let admin: string;
  let viewer: string;

  const register = async (name: string, seed: string, kubeconfig?: (sim: KubeSim) => string) => {
    const sim = await startKubeSim({ seed });
    sims.push(sim);
    const registered = await harness.gql(
      RegisterClusterDocument,
      { input: { name, apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: (kubeconfig ?? shippedIdentityKubeconfig)(sim), csrAutoApprove: false } },
      admin,
    );
    expect(registered.errors).toBeUndefined();
    return { sim, clusterId: registered.data?.registerCluster.id ?? '' };
  };
  const checksOf = async (clusterId: string) => {
    const answer = await harness.gql(ClusterChecksDocument, { clusterId }, viewer);
    expect(answer.errors).toBeUndefined();
    return answer.data?.clusterChecks ?? [];
  };
  const failing = async (clusterId: string) => (await checksOf(clusterId)).filter((check) => !check.ok);

  beforeAll(async () => {
    harness = await startApiHarness();
    admin = await harness.tokenFor('ADMIN');
    viewer = await harness.tokenFor('VIEWER');
  });

  afterAll(async () => {
    await harness?.stop();
    await Promise.all(sims.map((sim) => sim.stop()));
  });

  it('finds every check passing on a cluster with the shipped RBAC, for a VIEWER; refuses anonymous callers', async () => {
    const { clusterId } = await register('ready', SHIPPED_RBAC);
    const checks = await checksOf(clusterId);
    expect(checks.map((check) => [check.name, check.ok, check.fix])).toEqual([
      ['API_ACCESS', true, null],
      ['BOOTSTRAP_NAMESPACE', true, null],
      ['SERVICE_PERMISSIONS', true, null],
      ['RUN_IDENTITIES_FILE_CSRS', true, null],
    ]);
    expect(checks[0]?.reason).toBe('the API server answers; the service is system:serviceaccount:ccos-scaler:ccos-scaler there');
    expect(checks[2]?.reason).toBe('system:serviceaccount:ccos-scaler:ccos-scaler has every one of the 27 permissions the service uses');
    const anonymous = await harness.gql(ClusterChecksDocument, { clusterId }, null);
    expect(anonymous.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    expect(anonymous.data ?? null).toBeNull();
  });

  it('answers any number of callers asking at once with one check of the cluster: one throwaway account, not one each', async () => {
    const { sim, clusterId } = await register('asked-at-once', SHIPPED_RBAC);
    const throwawayAccounts: string[] = [];
    const unsubscribe = sim.store.subscribe((event) => {
      if (event.type === 'ADDED' && event.resource.kind === 'ServiceAccount' && event.object.metadata.name?.startsWith('ccos-scaler-check-')) {
        throwawayAccounts.push(event.object.metadata.name);
      }
    });
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => checksOf(clusterId)));
      expect(answers.every((checks) => checks.length === 4 && checks.every((check) => check.ok))).toBe(true);
      expect(throwawayAccounts).toHaveLength(1);
      // Asked again afterwards, it checks again.
      await checksOf(clusterId);
      expect(throwawayAccounts).toHaveLength(2);
    } finally {
      unsubscribe();
    }
  });

  it('names the missing bootstrap namespace (credentials that may create accounts anywhere), and its manifest fixes it', async () => {
    const { sim, clusterId } = await register('no-namespace-admin', shippedRbacWith(withoutBootstrapNamespace), (s) => s.kubeconfig);
    const [check] = await failing(clusterId);
    expect(check).toMatchObject({ name: 'BOOTSTRAP_NAMESPACE', reasonCode: 'clusterCheck.bootstrap.missing', reasonParams: { namespace: BOOTSTRAP_NAMESPACE } });
    expect(check?.reason).toContain(`namespace ${BOOTSTRAP_NAMESPACE} does not exist`);
    expect(formatServerText('zh-CN', check?.reasonCode, check?.reasonParams, check?.reason)).toContain(`命名空间 ${BOOTSTRAP_NAMESPACE} 不存在`);
    expect(check?.fix).toContain(`kind: Namespace\nmetadata:\n  name: ${BOOTSTRAP_NAMESPACE}`);
    await applyAsAdmin(sim, check?.fix ?? '');
    expect(await failing(clusterId)).toEqual([]);
  });

  it('says the shipped identity may not mint identities when the bootstrap namespace is missing; the manifest served for it fixes both checks', async () => {
    const { sim, clusterId } = await register('no-namespace', shippedRbacWith(withoutBootstrapNamespace));
    const failed = await failing(clusterId);
    expect(failed.map((check) => check.name)).toEqual(['BOOTSTRAP_NAMESPACE', 'SERVICE_PERMISSIONS']);
    expect(failed[0]?.reason).toContain(`system:serviceaccount:ccos-scaler:ccos-scaler may not create ServiceAccounts in namespace ${BOOTSTRAP_NAMESPACE}`);
    expect(failed[1]?.reason).toContain(`create serviceaccounts/token -n ${BOOTSTRAP_NAMESPACE}`);
    const manifest = (await harness.gql(ClusterBootstrapManifestDocument, { clusterId }, viewer)).data?.clusterBootstrapManifest ?? '';
    expect(manifest).toBe(failed[0]?.fix);
    expect(manifest).toContain('kind: ServiceAccount\n    name: ccos-scaler\n    namespace: ccos-scaler');
    await applyAsAdmin(sim, manifest);
    expect(await failing(clusterId)).toEqual([]);
  });

  it('names the verb a ClusterRole lacks, and the fix is the shipped RBAC', async () => {
    const { clusterId } = await register('no-evictions', shippedRbacWith(withoutEvictions));
    const failed = await failing(clusterId);
    expect(failed).toEqual([
      {
        name: 'SERVICE_PERMISSIONS',
        ok: false,
        reason: 'system:serviceaccount:ccos-scaler:ccos-scaler lacks 1 permission the service uses: create pods/eviction',
        reasonCode: 'clusterCheck.permissions.missing',
        reasonParams: { who: 'system:serviceaccount:ccos-scaler:ccos-scaler', count: 1, missing: 'create pods/eviction' },
        fix: 'kubectl apply -k deploy/base/rbac',
      },
    ]);
  });

  it('says the runs\' accounts may not file CSRs without their binding to system:node-bootstrapper; the manifest fixes it', async () => {
    const { sim, clusterId } = await register('no-bootstrapper', shippedRbacWith((object) => (object.kind === 'ClusterRoleBinding' && object.metadata.name === 'ccos-scaler-bootstrap-node-bootstrapper' ? null : object)));
    const [check, ...others] = await failing(clusterId);
    expect(others).toEqual([]);
    expect(check).toMatchObject({ name: 'RUN_IDENTITIES_FILE_CSRS', reasonCode: 'clusterCheck.runCsrs.denied', reasonParams: { namespace: BOOTSTRAP_NAMESPACE } });
    expect(check?.reason).toContain(`system:node-bootstrapper is not bound to the group system:serviceaccounts:${BOOTSTRAP_NAMESPACE}`);
    expect(check?.fix).toContain('kind: ClusterRoleBinding');
    await applyAsAdmin(sim, check?.fix ?? '');
    expect(await failing(clusterId)).toEqual([]);
  });

  it('answers a failed API_ACCESS check alone when the API server is down', async () => {
    const { sim, clusterId } = await register('gone', SHIPPED_RBAC);
    await sim.stop({ holdPort: true });
    const checks = await checksOf(clusterId);
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ name: 'API_ACCESS', ok: false, reasonCode: 'clusterCheck.apiAccess.failed', fix: null });
    expect(checks[0]?.reason).toMatch(/^the API server does not answer the registered credentials: .*cannot reach the API server/);
  });
});
