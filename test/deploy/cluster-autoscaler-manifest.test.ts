import * as appsV1 from 'kubernetes-models/apps/v1';
import * as rbacV1 from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectl } from '../support/kubectl-drain';

/**
 * deploy/optional/cluster-autoscaler: the optional cluster-autoscaler wired to the externalgrpc
 * provider. It renders with the real `kubectl kustomize`, every object validates against the
 * Kubernetes OpenAPI schema, and it reads the files `ccos-scaler autoscaler connection --dir`
 * writes from the Secret it mounts, at the paths the issued cloud-config names. No image is pulled.
 */

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & Record<string, unknown>;
const MODELS: Record<string, new (data: Record<string, unknown>) => { validate(): void }> = {
  'v1/ServiceAccount': coreV1.ServiceAccount as never,
  'apps/v1/Deployment': appsV1.Deployment as never,
  'rbac.authorization.k8s.io/v1/ClusterRole': rbacV1.ClusterRole as never,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': rbacV1.ClusterRoleBinding as never,
  'rbac.authorization.k8s.io/v1/Role': rbacV1.Role as never,
  'rbac.authorization.k8s.io/v1/RoleBinding': rbacV1.RoleBinding as never,
};

describe('deploy/optional/cluster-autoscaler', () => {
  it('renders valid objects that run cluster-autoscaler against the externalgrpc provider with the issued files', async () => {
    const run = await kubectl({ PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, ['kustomize', 'deploy/optional/cluster-autoscaler']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const manifests = parseAllDocuments(run.stdout).map((doc) => doc.toJSON() as Manifest).filter(Boolean);
    expect(manifests.map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`).sort()).toEqual([
      'ClusterRole//cluster-autoscaler',
      'ClusterRoleBinding//cluster-autoscaler',
      'Deployment/kube-system/cluster-autoscaler',
      'Role/kube-system/cluster-autoscaler',
      'RoleBinding/kube-system/cluster-autoscaler',
      'ServiceAccount/kube-system/cluster-autoscaler',
    ]);
    for (const manifest of manifests) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(Model, manifest.kind).toBeDefined();
      expect(() => new Model(manifest).validate()).not.toThrow();
    }
    const deployment = manifests.find((m) => m.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: Array<{ command: string[]; volumeMounts: Array<{ name: string; mountPath: string }> }>; volumes: Array<{ name: string; secret: { secretName: string } }> } } };
    };
    const [container] = deployment.spec.template.spec.containers;
    expect(container.command).toEqual(expect.arrayContaining(['--cloud-provider=externalgrpc', '--cloud-config=/etc/cluster-autoscaler/externalgrpc/cloud-config']));
    expect(container.volumeMounts).toEqual([expect.objectContaining({ name: 'externalgrpc', mountPath: '/etc/cluster-autoscaler/externalgrpc' })]);
    expect(deployment.spec.template.spec.volumes).toEqual([expect.objectContaining({ name: 'externalgrpc', secret: expect.objectContaining({ secretName: 'cluster-autoscaler-externalgrpc' }) })]);
  });
});
