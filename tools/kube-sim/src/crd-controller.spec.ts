import type { V1APIResourceList, V1CustomResourceDefinition, V1NetworkPolicyList, V1Service, V1Status } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { rawRequest } from './testing/kube-clients';

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', shortNames: ['wg'] },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, subresources: { status: {} } }],
  },
};

describe('CustomResourceDefinitions, Services and NetworkPolicies', () => {
  let sim: KubeSim;
  const call = async <T = V1Status>(method: string, path: string, body?: unknown) => {
    const res = await rawRequest(sim, { method, path, body: body === undefined ? undefined : JSON.stringify(body), headers: body === undefined ? {} : { 'Content-Type': 'application/json' } });
    return { status: res.status, body: JSON.parse(res.body) as T & V1Status };
  };
  type Widget = { spec?: unknown; status?: unknown; metadata: { generation?: number } };

  beforeAll(async () => {
    sim = await startKubeSim();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('a created CRD is established at once and serves its resource, in discovery and by name', async () => {
    expect((await call('GET', '/apis/example.com/v1')).status).toBe(404);
    const created = await call<V1CustomResourceDefinition>('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', WIDGET_CRD);
    expect(created.status).toBe(201);
    expect(created.body.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
    expect(created.body.status?.acceptedNames).toMatchObject({ kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' });

    const resources = (await call<V1APIResourceList>('GET', '/apis/example.com/v1')).body.resources.map((r) => r.name);
    expect(resources).toEqual(['widgets', 'widgets/status']);
    const widget = await call<Widget>('POST', '/apis/example.com/v1/namespaces/default/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 }, status: { ready: true } });
    expect(widget.status).toBe(201);
    // The status subresource: status is not written through the main resource.
    expect(widget.body.status).toBeUndefined();
    expect(widget.body.metadata.generation).toBe(1);
    expect((await call<Widget>('GET', '/apis/example.com/v1/namespaces/default/widgets/w1')).body.spec).toEqual({ size: 3 });
  });

  it('refuses a CRD whose name is not plural.group or that has no storage version', async () => {
    const wrongName = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { ...WIDGET_CRD, metadata: { name: 'gadgets.example.com' } });
    expect(wrongName.status).toBe(422);
    expect(wrongName.body.message).toContain('must be spec.names.plural+"."+spec.group');
    const noStorage = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      ...WIDGET_CRD,
      metadata: { name: 'things.example.com' },
      spec: { ...WIDGET_CRD.spec, names: { kind: 'Thing', plural: 'things' }, versions: [{ ...WIDGET_CRD.spec.versions[0], storage: false }] },
    });
    expect(noStorage.status).toBe(422);
    expect(noStorage.body.message).toContain('must have exactly one version marked as storage version');
  });

  it('a Service gets its defaults and a cluster IP from 10.96.0.0/12 that an update cannot change; NodePort and LoadBalancer ports get node ports', async () => {
    const created = await call<V1Service>('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'web' }, spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    expect(created.status).toBe(201);
    const spec = created.body.spec ?? {};
    expect(spec.clusterIP).toMatch(/^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/);
    expect(spec.clusterIPs).toEqual([spec.clusterIP]);
    expect(spec.ports?.[0]).toMatchObject({ protocol: 'TCP', targetPort: 8080, nodePort: expect.any(Number) });
    expect(spec.ports?.[0].nodePort).toBeGreaterThanOrEqual(30000);
    expect(spec).toMatchObject({ sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster', externalTrafficPolicy: 'Cluster' });
    const changed = await call('PUT', '/api/v1/namespaces/default/services/web', { ...created.body, spec: { ...spec, clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] } });
    expect(changed.status).toBe(422);
    expect(changed.body.message).toContain('may not change once set');
    const noPorts = await call('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'empty' }, spec: { selector: { app: 'web' } } });
    expect(noPorts.status).toBe(422);
  });

  it('NetworkPolicies are stored and served (nothing enforces them)', async () => {
    const created = await call('POST', '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', { metadata: { name: 'deny' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } });
    expect(created.status).toBe(201);
    expect((await call<V1NetworkPolicyList>('GET', '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies')).body.items).toHaveLength(1);
  });
});
