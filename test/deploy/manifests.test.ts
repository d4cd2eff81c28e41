import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as rbacV1 from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';
import { kubectl } from '../support/kubectl-drain';

/**
 * deploy/: a kustomize base and two overlays. Each renders with the real `kubectl kustomize`;
 * every object validates against the Kubernetes OpenAPI schema (kubernetes-models, generated from
 * it; the ServiceMonitor against the Prometheus Operator's CRD schema, @kubernetes-models/
 * prometheus-operator); the RBAC rendered is exactly deploy/base/rbac, the objects the
 * least-privilege test and the e2e worlds apply; and the real `kubectl apply -k` creates it all on
 * kube-sim.
 */

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; spec?: Record<string, unknown> } & Record<string, unknown>;
interface Validating {
  validate(): void;
}
type Model = new (data: Record<string, unknown>) => Validating;

const OVERLAYS = ['kubernetes', 'openshift'] as const;
const ENV_BASE = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };

/** The schema of each kind the manifests use, from the packages generated from the OpenAPI documents. */
const MODELS: Record<string, unknown> = {
  'v1/Namespace': coreV1.Namespace,
  'v1/ServiceAccount': coreV1.ServiceAccount,
  'v1/ConfigMap': coreV1.ConfigMap,
  'v1/Service': coreV1.Service,
  'apps/v1/Deployment': appsV1.Deployment,
  'policy/v1/PodDisruptionBudget': policyV1.PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': networkingV1.NetworkPolicy,
  'rbac.authorization.k8s.io/v1/ClusterRole': rbacV1.ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': rbacV1.ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': rbacV1.Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': rbacV1.RoleBinding,
  'monitoring.coreos.com/v1/ServiceMonitor': monitoringV1.ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': monitoringV1.PrometheusRule,
};

/**
 * Stand-ins for APIs a real cluster gets elsewhere: the Prometheus Operator's CRDs (their schemas are
 * checked above, by the models package) and OpenShift's route.openshift.io (an aggregated API
 * there). Both keep what they are sent, so kubectl apply exercises discovery and storage only.
 */
const STAND_IN_CRDS = [
  { group: 'monitoring.coreos.com', kind: 'ServiceMonitor', plural: 'servicemonitors', shortNames: ['smon'] },
  { group: 'monitoring.coreos.com', kind: 'PrometheusRule', plural: 'prometheusrules', shortNames: ['promrule'] },
  { group: 'route.openshift.io', kind: 'Route', plural: 'routes', shortNames: [] },
]
  .map(
    ({ group, kind, plural, shortNames }) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${plural}.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {kind: ${kind}, plural: ${plural}, singular: ${kind.toLowerCase()}, listKind: ${kind}List, shortNames: [${shortNames.join(', ')}]}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}`,
  )
  .join('\n---\n');

const keyOf = (m: Manifest) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;

function parseDocuments(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJSON() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/** Schema errors of one object, or the reason it cannot be checked. */
function schemaErrors(manifest: Manifest): string | undefined {
  // Each model's constructor takes its kind's fields; the manifest is checked, not trusted, to have them.
  const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`] as Model | undefined;
  if (!model) {
    return `no schema for ${manifest.apiVersion} ${manifest.kind}`;
  }
  try {
    new model(manifest).validate();
    return undefined;
  } catch (error) {
    return `${keyOf(manifest)}: ${(error as Error).message}`;
  }
}

/** `deployment.apps`, `service`: a type kubectl resolves without ambiguity. */
function kubectlType(manifest: Manifest): string {
  const group = manifest.apiVersion.includes('/') ? manifest.apiVersion.split('/')[0] : '';
  return group ? `${manifest.kind.toLowerCase()}.${group}` : manifest.kind.toLowerCase();
}

const byKey = (manifests: Manifest[]) => Object.fromEntries(manifests.map((m) => [keyOf(m), m]));

describe('deploy/ (kustomize base and overlays)', () => {
  const rendered: Record<string, Manifest[]> = {};

  beforeAll(async () => {
    for (const overlay of OVERLAYS) {
      const run = await kubectl(ENV_BASE, ['kustomize', `deploy/overlays/${overlay}`]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      rendered[overlay] = parseDocuments(run.stdout);
    }
  });

  it.each(OVERLAYS)('%s renders the whole deployment', (overlay) => {
    expect(rendered[overlay].map(keyOf).sort()).toEqual(
      [
        'ClusterRole//ccos-scaler',
        'ClusterRoleBinding//ccos-scaler',
        'ClusterRoleBinding//ccos-scaler-bootstrap-node-bootstrapper',
        'ConfigMap/ccos-scaler/ccos-scaler',
        'ConfigMap/ccos-scaler/ccos-scaler-grafana-dashboard',
        'Deployment/ccos-scaler/ccos-scaler',
        'Namespace//ccos-scaler',
        'Namespace//ccos-scaler-bootstrap',
        'NetworkPolicy/ccos-scaler/ccos-scaler',
        'PodDisruptionBudget/ccos-scaler/ccos-scaler',
        'PrometheusRule/ccos-scaler/ccos-scaler-alerts',
        'PrometheusRule/ccos-scaler/ccos-scaler-certificates',
        'Role/ccos-scaler-bootstrap/ccos-scaler-bootstrap-identities',
        'Role/kube-system/ccos-scaler',
        'RoleBinding/ccos-scaler-bootstrap/ccos-scaler-bootstrap-identities',
        'RoleBinding/kube-system/ccos-scaler',
        'Service/ccos-scaler/ccos-scaler',
        'ServiceAccount/ccos-scaler/ccos-scaler',
        'ServiceMonitor/ccos-scaler/ccos-scaler',
        ...(overlay === 'openshift' ? ['Route/ccos-scaler/ccos-scaler', 'Route/ccos-scaler/ccos-scaler-agents'] : []),
      ].sort(),
    );
  });

  it.each(OVERLAYS)('%s: every object validates against its OpenAPI schema', (overlay) => {
    const checked = rendered[overlay].filter((m) => m.kind !== 'Route');
    expect(checked.map(schemaErrors).filter(Boolean)).toEqual([]);
    expect(checked.length).toBeGreaterThanOrEqual(16);
  });

  it('the schema check is not vacuous: a wrong type, a missing required field or an unknown enum value is refused', () => {
    const deployment = byKey(rendered['kubernetes'])['Deployment/ccos-scaler/ccos-scaler'];
    const broken = (mutate: (copy: Manifest) => void): Manifest => {
      const copy = structuredClone(deployment);
      mutate(copy);
      return copy;
    };
    const template = (m: Manifest) => (m.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec;
    expect(schemaErrors(broken((m) => ((m.spec as Record<string, unknown>)['replicas'] = 'two')))).toMatch(/replicas must be integer/);
    expect(schemaErrors(broken((m) => delete (m.spec as Record<string, unknown>)['selector']))).toMatch(/spec must have required property selector/);
    expect(schemaErrors(broken((m) => (template(m).containers[0]['imagePullPolicy'] = 'Sometimes')))).toMatch(/imagePullPolicy must be equal to one of the allowed values/);
    const monitor = structuredClone(byKey(rendered['kubernetes'])['ServiceMonitor/ccos-scaler/ccos-scaler']);
    (monitor.spec as { endpoints: Array<Record<string, unknown>> }).endpoints[0]['scheme'] = 'gopher';
    expect(schemaErrors(monitor)).toMatch(/scheme must be equal to one of the allowed values/);
  });

  it('OpenShift Routes: one re-encrypting for people, one passing TLS through for agents (no npm package ships the Route schema: checked here)', () => {
    const routes = rendered['openshift'].filter((m) => m.kind === 'Route');
    expect(routes.map((r) => [r.apiVersion, r.metadata.name, r.spec])).toEqual([
      ['route.openshift.io/v1', 'ccos-scaler', { to: { kind: 'Service', name: 'ccos-scaler', weight: 100 }, port: { targetPort: 'api' }, tls: { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' }, wildcardPolicy: 'None' }],
      ['route.openshift.io/v1', 'ccos-scaler-agents', { to: { kind: 'Service', name: 'ccos-scaler', weight: 100 }, port: { targetPort: 'api' }, tls: { termination: 'passthrough', insecureEdgeTerminationPolicy: 'None' }, wildcardPolicy: 'None' }],
    ]);
    const service = byKey(rendered['openshift'])['Service/ccos-scaler/ccos-scaler'];
    expect(service.metadata.annotations).toEqual({ 'service.beta.openshift.io/serving-cert-secret-name': 'ccos-scaler-tls' });
  });

  it.each(OVERLAYS)('%s: the RBAC rendered is exactly deploy/base/rbac, the objects the least-privilege test and the e2e worlds apply', (overlay) => {
    const shipped = parseDocuments(SHIPPED_RBAC);
    expect(shipped).toHaveLength(10);
    const renderedRbac = byKey(rendered[overlay].filter((m) => shipped.some((s) => keyOf(s) === keyOf(m))));
    expect(renderedRbac).toEqual(byKey(shipped));
  });

  it.each(OVERLAYS)('%s: a hardened Deployment of two replicas that mounts no service-account token', (overlay) => {
    const objects = byKey(rendered[overlay]);
    const deployment = objects['Deployment/ccos-scaler/ccos-scaler'] as unknown as appsV1.IDeployment;
    const pod = deployment.spec?.template.spec;
    const container = pod?.containers[0];
    expect(deployment.spec?.replicas).toBe(2);
    expect(pod?.automountServiceAccountToken).toBe(false);
    expect(objects['ServiceAccount/ccos-scaler/ccos-scaler']['automountServiceAccountToken']).toBe(false);
    expect(pod?.serviceAccountName).toBe('ccos-scaler');
    expect(pod?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0].podAffinityTerm.topologyKey).toBe('kubernetes.io/hostname');
    expect(pod?.securityContext?.runAsNonRoot).toBe(true);
    expect(pod?.securityContext?.runAsUser).toBe(overlay === 'openshift' ? undefined : 1000);
    expect(container?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect([container?.livenessProbe?.httpGet?.path, container?.readinessProbe?.httpGet?.path, container?.startupProbe?.httpGet?.path]).toEqual(['/healthz', '/readyz', '/healthz']);
    expect(container?.resources?.requests && container.resources.limits?.['memory']).toBeTruthy();
    expect(container?.env?.map((e) => [e.name, e.valueFrom?.secretKeyRef?.name, e.valueFrom?.secretKeyRef?.key])).toEqual([
      ['DATABASE_URL', 'ccos-scaler', 'database-url'],
      ['SECRET_KEY', 'ccos-scaler', 'secret-key'],
      ['ADMIN_PASSWORD', 'ccos-scaler', 'admin-password'],
    ]);
    // Writable: /tmp only (and the artifacts volume, mounted read-only); TLS from a Secret, at the configured paths.
    expect(container?.volumeMounts?.map((v) => [v.mountPath, v.readOnly ?? false])).toEqual([
      ['/tmp', false],
      ['/var/lib/ccos-scaler/artifacts', true],
      ['/etc/ccos-scaler/tls', true],
    ]);
    expect(pod?.volumes?.find((v) => v.name === 'tls')?.secret?.secretName).toBe('ccos-scaler-tls');
    const config = objects['ConfigMap/ccos-scaler/ccos-scaler']['data'] as Record<string, string>;
    expect([config['TLS_CERT_FILE'], config['TLS_KEY_FILE'], config['DATA_DIR']]).toEqual(['/etc/ccos-scaler/tls/tls.crt', '/etc/ccos-scaler/tls/tls.key', '/tmp/ccos-scaler']);
    expect((objects['PodDisruptionBudget/ccos-scaler/ccos-scaler'].spec as { minAvailable: number }).minAvailable).toBe(1);
  });

  describe('the real kubectl apply -k against kube-sim', () => {
    let sim: KubeSim;
    let dir: string;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ccos-deploy-'));
      sim = await startKubeSim({ kubeconfigOut: join(dir, 'admin.kubeconfig'), seed: STAND_IN_CRDS });
    });
    afterAll(async () => {
      await sim?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const env = (cache: string) => ({ ...ENV_BASE, HOME: dir, KUBECONFIG: join(dir, 'admin.kubeconfig'), KUBECACHEDIR: join(dir, cache) });

    it.each(OVERLAYS)('%s: apply creates every object, a server-side dry run of it passes, and applying again changes nothing', async (overlay) => {
      const applied = await kubectl(env(`cache-${overlay}`), ['apply', '-k', `deploy/overlays/${overlay}`]);
      expect(applied.stderr).toBe('');
      expect(applied.code).toBe(0);
      const lines = applied.stdout.trim().split('\n');
      expect(lines).toHaveLength(rendered[overlay].length);
      expect(lines.every((line) => / (created|configured|unchanged)$/.test(line)), applied.stdout).toBe(true);

      for (const manifest of rendered[overlay]) {
        const got = await kubectl(env(`cache-${overlay}`), ['get', kubectlType(manifest), manifest.metadata.name, ...(manifest.metadata.namespace ? ['-n', manifest.metadata.namespace] : []), '-o', 'json']);
        expect(got.code, `${keyOf(manifest)}: ${got.stderr}`).toBe(0);
        const stored = JSON.parse(got.stdout) as Manifest;
        expect(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], keyOf(manifest)).toBeDefined();
      }
      const service = sim.store.get(sim.resource('services'), 'ccos-scaler', 'ccos-scaler');
      expect(service?.spec?.['clusterIP']).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\./);
      expect(service?.spec?.['type']).toBe(overlay === 'kubernetes' ? 'LoadBalancer' : 'ClusterIP');

      // Once the namespaces exist (a dry run creates none, on a real server too), the server accepts it all.
      const dry = await kubectl(env(`cache-${overlay}`), ['apply', '-k', `deploy/overlays/${overlay}`, '--dry-run=server']);
      expect(dry.stderr).toBe('');
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain('(server dry run)');

      const versions = () => rendered[overlay].map((m) => kubectlType(m) + '/' + String(sim.store.definitions.map((def) => sim.store.get(def, m.metadata.namespace, m.metadata.name)).find((o) => o?.kind === m.kind)?.metadata.resourceVersion));
      const before = versions();
      const again = await kubectl(env(`cache-${overlay}`), ['apply', '-k', `deploy/overlays/${overlay}`]);
      expect(again.code, again.stderr).toBe(0);
      // A PodDisruptionBudget's selector has the patch strategy "replace", so kubectl's three-way
      // patch is never empty and it says "configured" on every apply; the server's update is a no-op.
      expect(again.stdout.trim().split('\n').filter((line) => !line.endsWith(' unchanged'))).toEqual(['poddisruptionbudget.policy/ccos-scaler configured']);
      expect(versions()).toEqual(before);
    });

    it('the applied RBAC gives the service account what the product needs and no more (kubectl auth can-i)', async () => {
      const as = ['--as=system:serviceaccount:ccos-scaler:ccos-scaler'];
      const canI = async (...args: string[]) => (await kubectl(env('cache-can-i'), ['auth', 'can-i', ...args, ...as])).stdout.trim();
      expect(await canI('create', 'pods', '--subresource=eviction', '-n', 'shop')).toBe('yes');
      expect(await canI('update', 'certificatesigningrequests', '--subresource=approval')).toBe('yes');
      expect(await canI('create', 'serviceaccounts', '--subresource=token', '-n', 'ccos-scaler-bootstrap')).toBe('yes');
      expect(await canI('update', 'leases/ccos-scaler-csr-approver', '-n', 'kube-system')).toBe('yes');
      expect(await canI('create', 'serviceaccounts', '-n', 'kube-system')).toBe('no');
      expect(await canI('get', 'secrets', '-n', 'kube-system')).toBe('no');
      expect(await canI('update', 'leases/kube-controller-manager', '-n', 'kube-system')).toBe('no');
      expect(await canI('create', 'pods', '-n', 'shop')).toBe('no');
    });
  });
});
