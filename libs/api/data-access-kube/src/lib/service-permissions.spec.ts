import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SHIPPED_RBAC_DIR } from '../testing/shipped-rbac';
import { DEFAULT_SERVICE_NAMESPACES, SERVICE_RULES, bootstrapIdentitiesManifest, describePermission, servicePermissions, subjectOfUsername } from './service-permissions';

interface ShippedObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: unknown[];
}

function shipped(file: string): ShippedObject[] {
  return parseAllDocuments(readFileSync(join(SHIPPED_RBAC_DIR, file), 'utf8')).map((document) => document.toJS() as ShippedObject);
}

function rulesOf(file: string, kind: string, name: string): unknown[] | undefined {
  return shipped(file).find((object) => object.kind === kind && object.metadata.name === name)?.rules;
}

describe('the service permissions in code and in deploy/base/rbac', () => {
  it.each([
    ['cluster', 'cluster-role.yaml', 'ClusterRole', 'ccos-scaler'],
    ['leases', 'role.yaml', 'Role', 'ccos-scaler'],
    ['apiService', 'role.yaml', 'Role', 'ccos-scaler-api-service'],
    ['bootstrapIdentities', 'bootstrap-identities.yaml', 'Role', 'ccos-scaler-bootstrap-identities'],
  ] as const)('SERVICE_RULES.%s are the rules of %s %s %s', (role, file, kind, name) => {
    expect(SERVICE_RULES[role]).toEqual(rulesOf(file, kind, name));
  });

  it('ships no other Role or ClusterRole', () => {
    const roles = ['cluster-role.yaml', 'role.yaml', 'bootstrap-identities.yaml', 'bindings.yaml', 'service-account.yaml']
      .flatMap(shipped)
      .filter((object) => object.kind === 'Role' || object.kind === 'ClusterRole')
      .map((object) => `${object.kind}/${object.metadata.name}`);
    expect(roles.sort()).toEqual(['ClusterRole/ccos-scaler', 'Role/ccos-scaler', 'Role/ccos-scaler-api-service', 'Role/ccos-scaler-bootstrap-identities']);
  });

  it('the bootstrap manifest with the defaults is bootstrap-identities.yaml and its RoleBinding from bindings.yaml', () => {
    const rendered = parseAllDocuments(bootstrapIdentitiesManifest(DEFAULT_SERVICE_NAMESPACES.bootstrap)).map((document) => document.toJS() as ShippedObject);
    const binding = shipped('bindings.yaml').find((object) => object.kind === 'RoleBinding' && object.metadata.namespace === DEFAULT_SERVICE_NAMESPACES.bootstrap);
    expect(binding).toBeDefined();
    expect(rendered).toEqual([...shipped('bootstrap-identities.yaml'), binding]);
  });

  it('puts another namespace and another user into the manifest', () => {
    const rendered = bootstrapIdentitiesManifest('scaler-runs', subjectOfUsername('ops-admin'));
    const objects = parseAllDocuments(rendered).map((document) => document.toJS() as Record<string, unknown>);
    expect(objects.map((object) => [object['kind'], (object['metadata'] as ShippedObject['metadata']).name, (object['metadata'] as ShippedObject['metadata']).namespace])).toEqual([
      ['Namespace', 'scaler-runs', undefined],
      ['ClusterRoleBinding', 'scaler-runs-node-bootstrapper', undefined],
      ['Role', 'ccos-scaler-bootstrap-identities', 'scaler-runs'],
      ['RoleBinding', 'ccos-scaler-bootstrap-identities', 'scaler-runs'],
    ]);
    expect(rendered).toContain('name: system:serviceaccounts:scaler-runs');
    expect(objects[3]?.['subjects']).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ops-admin' }]);
    expect(subjectOfUsername('system:serviceaccount:ops:scaler')).toEqual({ kind: 'ServiceAccount', namespace: 'ops', name: 'scaler' });
  });

  it('asks about every verb, resource and name where the service uses it', () => {
    const asked = servicePermissions({ bootstrap: 'runs', leases: 'scaler' }).map(describePermission);
    expect(asked).toContain('create pods/eviction');
    expect(asked).toContain('approve signers.certificates.k8s.io/kubernetes.io/kubelet-serving');
    expect(asked).toContain('update leases.coordination.k8s.io/ccos-scaler-csr-approver -n scaler');
    expect(asked).toContain('get services/kubernetes -n default');
    expect(asked).toContain('create serviceaccounts/token -n runs');
    expect(asked).toHaveLength(new Set(asked).size);
    expect(asked).toHaveLength(27);
  });
});
