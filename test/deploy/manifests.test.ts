import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
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
  'v1/PersistentVolumeClaim': coreV1.PersistentVolumeClaim,
  'networking.k8s.io/v1/Ingress': networkingV1.Ingress,
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

/** What Kubernetes accepts as a storage class name (and the API server checks a claim's against). */
const RFC1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** An address and a prefix length that fits it: what the API server's ipBlock.cidr check accepts. */
function isCidr(text: string): boolean {
  const [address, prefix, ...rest] = text.split('/');
  const family = isIP(address ?? '');
  const bits = Number(prefix);
  return rest.length === 0 && family !== 0 && /^\d{1,3}$/.test(prefix ?? '') && bits <= (family === 4 ? 32 : 128);
}

/** Why a NetworkPolicy peer means "anywhere" (empty when it does not). */
function anywhere(peer: networkingV1.INetworkPolicyPeer): string[] {
  const cidr = peer.ipBlock?.cidr;
  if (cidr !== undefined) {
    return cidr.endsWith('/0') ? [cidr] : [];
  }
  const emptySelector = (selector: object | undefined) => selector !== undefined && Object.keys(selector).length === 0;
  if (peer.namespaceSelector !== undefined && emptySelector(peer.namespaceSelector) && (peer.podSelector === undefined || emptySelector(peer.podSelector))) {
    return ['every namespace'];
  }
  return peer.namespaceSelector === undefined && peer.podSelector === undefined ? ['an empty peer'] : [];
}

/** A peer in words: its CIDR, or its selectors. */
function peerName(peer: networkingV1.INetworkPolicyPeer): string {
  if (peer.ipBlock) {
    return peer.ipBlock.cidr;
  }
  const labels = (selector: { matchLabels?: Record<string, string> } | undefined) => Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  const namespaces = peer.namespaceSelector ? `namespaces ${labels(peer.namespaceSelector)}` : '';
  const pods = peer.podSelector ? (labels(peer.podSelector) ? `pods ${labels(peer.podSelector)}` : '(any pod)') : '';
  return [namespaces, pods].filter(Boolean).join(namespaces && pods.startsWith('pods') ? ', ' : ' ');
}

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
        'Deployment/ccos-scaler/ccos-scaler-worker',
        'Namespace//ccos-scaler',
        'Namespace//ccos-scaler-bootstrap',
        'NetworkPolicy/ccos-scaler/ccos-scaler-default-deny',
        'NetworkPolicy/ccos-scaler/ccos-scaler-dns',
        'NetworkPolicy/ccos-scaler/ccos-scaler-site',
        'PersistentVolumeClaim/ccos-scaler/ccos-scaler-artifacts',
        'PodDisruptionBudget/ccos-scaler/ccos-scaler',
        'PodDisruptionBudget/ccos-scaler/ccos-scaler-worker',
        'PrometheusRule/ccos-scaler/ccos-scaler-alerts',
        'PrometheusRule/ccos-scaler/ccos-scaler-certificates',
        'Role/ccos-scaler-bootstrap/ccos-scaler-bootstrap-identities',
        'Role/default/ccos-scaler-api-service',
        'Role/kube-system/ccos-scaler',
        'RoleBinding/ccos-scaler-bootstrap/ccos-scaler-bootstrap-identities',
        'RoleBinding/default/ccos-scaler-api-service',
        'RoleBinding/kube-system/ccos-scaler',
        'Service/ccos-scaler/ccos-scaler',
        'Service/ccos-scaler/ccos-scaler-agents',
        'Service/ccos-scaler/ccos-scaler-worker',
        'ServiceAccount/ccos-scaler/ccos-scaler',
        'ServiceMonitor/ccos-scaler/ccos-scaler',
        ...(overlay === 'openshift'
          ? ['Route/ccos-scaler/ccos-scaler', 'Route/ccos-scaler/ccos-scaler-agents', 'NetworkPolicy/ccos-scaler/ccos-scaler-listeners']
          : ['Ingress/ccos-scaler/ccos-scaler']),
      ].sort(),
    );
  });

  it.each(OVERLAYS)('%s: every object validates against its OpenAPI schema', (overlay) => {
    const checked = rendered[overlay].filter((m) => m.kind !== 'Route');
    expect(checked.map(schemaErrors).filter(Boolean)).toEqual([]);
    expect(checked.length).toBeGreaterThanOrEqual(22);
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

  it('OpenShift Routes: one re-encrypting for people, one passing TLS through to the agents\' listener only (no npm package ships the Route schema: checked here)', () => {
    const routes = rendered['openshift'].filter((m) => m.kind === 'Route');
    expect(routes.map((r) => [r.apiVersion, r.metadata.name, r.spec])).toEqual([
      ['route.openshift.io/v1', 'ccos-scaler', { to: { kind: 'Service', name: 'ccos-scaler', weight: 100 }, port: { targetPort: 'api' }, tls: { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' }, wildcardPolicy: 'None' }],
      ['route.openshift.io/v1', 'ccos-scaler-agents', { to: { kind: 'Service', name: 'ccos-scaler-agents', weight: 100 }, port: { targetPort: 'agents' }, tls: { termination: 'passthrough', insecureEdgeTerminationPolicy: 'None' }, wildcardPolicy: 'None' }],
    ]);
    const service = byKey(rendered['openshift'])['Service/ccos-scaler/ccos-scaler'];
    expect(service.metadata.annotations).toEqual({ 'service.beta.openshift.io/serving-cert-secret-name': 'ccos-scaler-tls' });
  });

  it.each(OVERLAYS)('%s: the RBAC rendered is exactly deploy/base/rbac, the objects the least-privilege test and the e2e worlds apply', (overlay) => {
    const shipped = parseDocuments(SHIPPED_RBAC);
    expect(shipped).toHaveLength(12);
    const renderedRbac = byKey(rendered[overlay].filter((m) => shipped.some((s) => keyOf(s) === keyOf(m))));
    expect(renderedRbac).toEqual(byKey(shipped));
  });

  // The API's pods (SERVICE_ROLE=api: they write imported artifact sets) and the workers' (SERVICE_ROLE=worker: they only read them).
  const ROLES = [
    { name: 'ccos-scaler', role: 'api', artifactsWritable: true },
    { name: 'ccos-scaler-worker', role: 'worker', artifactsWritable: false },
  ];
  it.each(OVERLAYS.flatMap((overlay) => ROLES.map((role) => ({ overlay, ...role }))))('$overlay: a hardened Deployment $name of two replicas ($role role) that mounts no service-account token', ({ overlay, name, role, artifactsWritable }) => {
    const objects = byKey(rendered[overlay]);
    const deployment = objects[`Deployment/ccos-scaler/${name}`] as unknown as appsV1.IDeployment;
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
    // No secret is an environment variable (each process the service starts would inherit it): each
    // comes as a file of the Secret ccos-scaler, named by its *_FILE variable.
    expect(container?.env?.map((e) => [e.name, e.value, e.valueFrom])).toEqual([
      ['SERVICE_ROLE', role, undefined],
      ['DATABASE_URL_FILE', '/etc/ccos-scaler/secrets/database-url', undefined],
      ['SECRET_KEY_FILE', '/etc/ccos-scaler/secrets/secret-key', undefined],
      ['ADMIN_PASSWORD_FILE', '/etc/ccos-scaler/secrets/admin-password', undefined],
    ]);
    expect(JSON.stringify(deployment)).not.toMatch(/secretKeyRef|"secretRef"/);
    expect(pod?.volumes?.find((v) => v.name === 'secrets')?.secret).toEqual({ secretName: 'ccos-scaler', defaultMode: 0o440 });
    // Writable: /tmp and, for the API, the shared artifacts volume; the secrets and TLS from Secrets, read-only, at the configured paths.
    expect(container?.volumeMounts?.map((v) => [v.mountPath, v.readOnly ?? false])).toEqual([
      ['/tmp', false],
      ['/var/lib/ccos-scaler/artifacts', !artifactsWritable],
      ['/etc/ccos-scaler/secrets', true],
      ['/etc/ccos-scaler/tls', true],
    ]);
    expect(pod?.volumes?.find((v) => v.name === 'tls')?.secret?.secretName).toBe('ccos-scaler-tls');
    const config = objects['ConfigMap/ccos-scaler/ccos-scaler']['data'] as Record<string, string>;
    expect([config['TLS_CERT_FILE'], config['TLS_KEY_FILE'], config['DATA_DIR']]).toEqual(['/etc/ccos-scaler/tls/tls.crt', '/etc/ccos-scaler/tls/tls.key', '/tmp/ccos-scaler']);
    expect(Object.keys(config).filter((name) => /^(DATABASE_URL|SECRET_KEY|ADMIN_PASSWORD)$/.test(name))).toEqual([]);
    const budget = objects[`PodDisruptionBudget/ccos-scaler/${name}`].spec as { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    expect([budget.minAvailable, budget.selector.matchLabels]).toEqual([1, deployment.spec?.selector.matchLabels]);
  });

  it.each(OVERLAYS)('%s: the artifacts are one ReadWriteMany claim every replica mounts at ARTIFACTS_DIR, writable (an upload to one replica is served by all)', (overlay) => {
    const objects = byKey(rendered[overlay]);
    const pod = (objects['Deployment/ccos-scaler/ccos-scaler'] as unknown as appsV1.IDeployment).spec?.template.spec;
    const volume = pod?.volumes?.find((v) => v.name === 'artifacts');
    expect(volume).toEqual({ name: 'artifacts', persistentVolumeClaim: { claimName: 'ccos-scaler-artifacts' } });
    const claim = objects['PersistentVolumeClaim/ccos-scaler/ccos-scaler-artifacts'] as unknown as coreV1.IPersistentVolumeClaim;
    expect(claim.spec?.accessModes).toEqual(['ReadWriteMany']);
    // The site names its class: left as shipped, the API server refuses the name and the pods stay Pending.
    expect(claim.spec?.storageClassName).toBe('SITE-RWX-STORAGE-CLASS');
    expect(RFC1123_SUBDOMAIN.test(claim.spec?.storageClassName ?? '')).toBe(false);
    const config = objects['ConfigMap/ccos-scaler/ccos-scaler']['data'] as Record<string, string>;
    expect(pod?.containers[0].volumeMounts?.find((m) => m.name === 'artifacts')).toEqual({ name: 'artifacts', mountPath: config['ARTIFACTS_DIR'] });
  });

  describe('what each overlay exposes, and to whom', () => {
    const policies = (overlay: string) => rendered[overlay].filter((m) => m.kind === 'NetworkPolicy') as unknown as networkingV1.INetworkPolicy[];
    const containerPorts = (overlay: string) =>
      Object.fromEntries(
        ((byKey(rendered[overlay])['Deployment/ccos-scaler/ccos-scaler'] as unknown as appsV1.IDeployment).spec?.template.spec?.containers[0].ports ?? []).map((p) => [p.name, p.containerPort]),
      );

    it.each(OVERLAYS)('%s: every NetworkPolicy ingress rule has a `from` and ports, every egress rule a `to` and ports, and no peer is "anywhere"', (overlay) => {
      const problems: string[] = [];
      for (const policy of policies(overlay)) {
        const name = policy.metadata?.name;
        policy.spec?.ingress?.forEach((rule, index) => {
          if (!rule.from?.length) {
            problems.push(`${name} ingress[${index}] has no from`);
          }
          if (!rule.ports?.length) {
            problems.push(`${name} ingress[${index}] has no ports`);
          }
          rule.from?.forEach((peer) => problems.push(...anywhere(peer).map((why) => `${name} ingress[${index}] from ${why}`)));
        });
        policy.spec?.egress?.forEach((rule, index) => {
          if (!rule.to?.length) {
            problems.push(`${name} egress[${index}] has no to`);
          }
          if (!rule.ports?.length) {
            problems.push(`${name} egress[${index}] has no ports`);
          }
          rule.to?.forEach((peer) => problems.push(...anywhere(peer).map((why) => `${name} egress[${index}] to ${why}`)));
        });
      }
      expect(problems).toEqual([]);
      // Not vacuous: the rules are there.
      const rules = policies(overlay).flatMap((p) => [...(p.spec?.ingress ?? []), ...(p.spec?.egress ?? [])]);
      expect(rules.length).toBeGreaterThanOrEqual(overlay === 'openshift' ? 6 : 7);
      expect(anywhere({ ipBlock: { cidr: '0.0.0.0/0' } })).toEqual(['0.0.0.0/0']);
      expect(anywhere({ namespaceSelector: {} })).toEqual(['every namespace']);
    });

    it.each(OVERLAYS)('%s: every pod of the service is under a default-deny policy, so a policy the API server refuses leaves it closed', (overlay) => {
      const deny = byKey(rendered[overlay])['NetworkPolicy/ccos-scaler/ccos-scaler-default-deny'] as unknown as networkingV1.INetworkPolicy;
      expect(deny.spec).toEqual({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ccos-scaler' } }, policyTypes: ['Ingress', 'Egress'] });
      for (const workload of rendered[overlay].filter((m) => m.kind === 'Deployment') as unknown as appsV1.IDeployment[]) {
        const labels = workload.spec?.template.metadata?.labels ?? {};
        expect(Object.entries(deny.spec?.podSelector.matchLabels ?? {}).every(([key, value]) => labels[key] === value), workload.metadata?.name).toBe(true);
      }
    });

    it.each(OVERLAYS)('%s: each listener is reached only by its own clients: people through the router or ingress controller, agents on theirs, Prometheus on metrics', (overlay) => {
      const ports = containerPorts(overlay);
      expect(ports).toEqual({ api: 4000, agents: 4443, metrics: 9090 });
      const config = byKey(rendered[overlay])['ConfigMap/ccos-scaler/ccos-scaler']['data'] as Record<string, string>;
      expect([Number(config['AGENT_PORT']), Number(config['METRICS_PORT'])]).toEqual([ports['agents'], ports['metrics']]);
      // Who may reach each port, over all policies (they add up).
      const admitted: Record<number, string[]> = {};
      for (const policy of policies(overlay)) {
        for (const rule of policy.spec?.ingress ?? []) {
          for (const port of rule.ports ?? []) {
            admitted[Number(port.port)] = [...(admitted[Number(port.port)] ?? []), ...(rule.from ?? []).map(peerName)].sort();
          }
        }
      }
      const router = ['namespaces network.openshift.io/policy-group=ingress (any pod)', 'namespaces policy-group.network.openshift.io/ingress= (any pod)'];
      expect(admitted).toEqual(
        overlay === 'openshift'
          ? {
              4000: router,
              4443: router,
              9090: ['namespaces kubernetes.io/metadata.name=openshift-user-workload-monitoring (any pod)', 'namespaces network.openshift.io/policy-group=monitoring (any pod)'],
            }
          : { 4000: ['namespaces kubernetes.io/metadata.name=ingress-nginx'], 4443: ['SITE-HOSTS-CIDR'], 9090: ['namespaces kubernetes.io/metadata.name=monitoring'] },
      );
    });

    it.each(OVERLAYS)('%s: out of the pods go DNS to the cluster DNS and, to the site\'s networks only, Postgres, the API servers and SSH', (overlay) => {
      const egress = policies(overlay).flatMap((p) => p.spec?.egress ?? []);
      const allowed = egress.flatMap((rule) => (rule.ports ?? []).map((port) => `${port.protocol}/${port.port} to ${(rule.to ?? []).map(peerName).join(', ')}`)).sort();
      const dns = overlay === 'openshift' ? ['5353', 'namespaces kubernetes.io/metadata.name=openshift-dns, pods dns.operator.openshift.io/daemonset-dns=default'] : ['53', 'namespaces kubernetes.io/metadata.name=kube-system, pods k8s-app=kube-dns'];
      expect(allowed).toEqual(
        [
          `TCP/22 to SITE-HOSTS-CIDR`,
          `TCP/443 to SITE-API-SERVERS-CIDR`,
          `TCP/5432 to SITE-DATABASE-CIDR`,
          `TCP/6443 to SITE-API-SERVERS-CIDR`,
          `TCP/${dns[0]} to ${dns[1]}`,
          `UDP/${dns[0]} to ${dns[1]}`,
        ].sort(),
      );
    });

    it.each(OVERLAYS)('%s: the site\'s placeholders are ones a real API server refuses (not CIDRs, not a storage class name), and every other ipBlock is a CIDR', (overlay) => {
      const cidrs = policies(overlay).flatMap((p) => [...(p.spec?.ingress ?? []).flatMap((r) => r.from ?? []), ...(p.spec?.egress ?? []).flatMap((r) => r.to ?? [])]).flatMap((peer) => (peer.ipBlock ? [peer.ipBlock.cidr] : []));
      const placeholders = cidrs.filter((cidr) => cidr.startsWith('SITE-'));
      expect(new Set(placeholders)).toEqual(new Set(['SITE-DATABASE-CIDR', 'SITE-API-SERVERS-CIDR', 'SITE-HOSTS-CIDR']));
      expect(placeholders.filter(isCidr)).toEqual([]);
      expect(cidrs.filter((cidr) => !cidr.startsWith('SITE-') && !isCidr(cidr))).toEqual([]);
      expect([isCidr('10.0.0.0/8'), isCidr('2001:db8::/64'), isCidr('10.0.0.0'), isCidr('10.0.0.0/33')]).toEqual([true, true, false, false]);
    });

    it.each(OVERLAYS)('%s: filled in as a site would, site.yaml renders with no placeholder left, valid CIDRs and a storage class name', async (overlay) => {
      const copy = await mkdtemp(join(tmpdir(), 'ccos-site-'));
      try {
        await cp('deploy', join(copy, 'deploy'), { recursive: true });
        const site = join(copy, 'deploy/overlays', overlay, 'site.yaml');
        const filled = (await readFile(site, 'utf8'))
          .replace(/SITE-DATABASE-CIDR/g, '10.20.0.15/32')
          .replace(/SITE-API-SERVERS-CIDR/g, '192.168.50.10/32')
          .replace(/cidr: SITE-HOSTS-CIDR/g, 'cidr: 192.168.60.0/24\n        - ipBlock:\n            cidr: 192.168.61.0/24')
          .replace(/SITE-RWX-STORAGE-CLASS/g, 'cephfs');
        await writeFile(site, filled);
        const run = await kubectl(ENV_BASE, ['kustomize', join(copy, 'deploy/overlays', overlay)]);
        expect(run.stderr).toBe('');
        expect(run.stdout).not.toContain('SITE-');
        const manifests = parseDocuments(run.stdout);
        expect(manifests.map(schemaErrors).filter((error) => error !== undefined && !/no schema for route/.test(error))).toEqual([]);
        const sitePolicy = byKey(manifests)['NetworkPolicy/ccos-scaler/ccos-scaler-site'] as unknown as networkingV1.INetworkPolicy;
        const ssh = sitePolicy.spec?.egress?.find((rule) => rule.ports?.some((port) => port.port === 22));
        expect(ssh?.to?.map((peer) => peer.ipBlock?.cidr)).toEqual(['192.168.60.0/24', '192.168.61.0/24']);
        const claim = byKey(manifests)['PersistentVolumeClaim/ccos-scaler/ccos-scaler-artifacts'] as unknown as coreV1.IPersistentVolumeClaim;
        expect(RFC1123_SUBDOMAIN.test(claim.spec?.storageClassName ?? '')).toBe(true);
      } finally {
        await rm(copy, { recursive: true, force: true });
      }
    });

    it.each(OVERLAYS)('%s: only the agents\' listener is published to the hosts; /metrics is published nowhere', (overlay) => {
      const objects = byKey(rendered[overlay]);
      const services = rendered[overlay].filter((m) => m.kind === 'Service') as unknown as coreV1.IService[];
      const agents = objects['Service/ccos-scaler/ccos-scaler-agents'] as unknown as coreV1.IService;
      expect(agents.spec?.ports?.map((p) => [p.name, p.port, p.targetPort])).toEqual([['agents', 443, 'agents']]);
      expect(agents.spec?.type).toBe(overlay === 'kubernetes' ? 'LoadBalancer' : 'ClusterIP');
      if (overlay === 'kubernetes') {
        expect(agents.spec?.externalTrafficPolicy).toBe('Local');
      }
      // The only Service outside the cluster network is the agents' one.
      expect(services.filter((svc) => svc.spec?.type !== 'ClusterIP').map((svc) => svc.metadata?.name)).toEqual(overlay === 'kubernetes' ? ['ccos-scaler-agents'] : []);
      // Routes and Ingresses reach the main port or the agents' listener, never metrics.
      const published = rendered[overlay].flatMap((m) =>
        m.kind === 'Route'
          ? [`${m.metadata.name} -> ${(m.spec as { to: { name: string }; port: { targetPort: string } }).to.name}:${(m.spec as { port: { targetPort: string } }).port.targetPort}`]
          : m.kind === 'Ingress'
            ? (m.spec as networkingV1.IIngress['spec'])?.rules?.flatMap((rule) => rule.http?.paths.map((path) => `${m.metadata.name} -> ${path.backend.service?.name}:${path.backend.service?.port?.name}`) ?? []) ?? []
            : [],
      );
      expect(published).toEqual(overlay === 'openshift' ? ['ccos-scaler -> ccos-scaler:api', 'ccos-scaler-agents -> ccos-scaler-agents:agents'] : ['ccos-scaler -> ccos-scaler:api']);
      const monitor = objects['ServiceMonitor/ccos-scaler/ccos-scaler'] as unknown as monitoringV1.IServiceMonitor;
      expect(monitor.spec.endpoints?.map((e) => [e.port, e.path, e.scheme])).toEqual([['metrics', '/metrics', 'http']]);
      const scraped = services.filter((svc) => Object.entries(monitor.spec.selector.matchLabels ?? {}).every(([k, v]) => svc.metadata?.labels?.[k] === v));
      const withMetrics = scraped.filter((svc) => svc.spec?.ports?.some((p) => p.name === 'metrics'));
      expect(withMetrics.map((svc) => [svc.metadata?.name, svc.spec?.type, svc.spec?.clusterIP, svc.spec?.ports?.map((p) => p.targetPort)])).toEqual([
        ['ccos-scaler', 'ClusterIP', undefined, ['api', 'metrics']],
        ['ccos-scaler-worker', 'ClusterIP', 'None', ['metrics']],
      ]);
      // One job for the API's pods and the workers' (the alert rules and the dashboard read job="ccos-scaler").
      expect([monitor.spec.jobLabel, ...withMetrics.map((svc) => svc.metadata?.labels?.[monitor.spec.jobLabel ?? ''])]).toEqual(['app.kubernetes.io/name', 'ccos-scaler', 'ccos-scaler']);
    });
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
      expect(service?.spec?.['type']).toBe('ClusterIP');
      const agents = sim.store.get(sim.resource('services'), 'ccos-scaler', 'ccos-scaler-agents');
      expect(agents?.spec?.['type']).toBe(overlay === 'kubernetes' ? 'LoadBalancer' : 'ClusterIP');

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
      expect(again.stdout.trim().split('\n').filter((line) => !line.endsWith(' unchanged'))).toEqual(['poddisruptionbudget.policy/ccos-scaler configured', 'poddisruptionbudget.policy/ccos-scaler-worker configured']);
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
