import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { rawRequest } from './testing/kube-clients';

interface ResourceEntry {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  group?: string;
  version?: string;
  shortNames?: string[];
}

describe('discovery', () => {
  let sim: KubeSim;
  const getJson = async (path: string, accept?: string) => {
    const res = await rawRequest(sim, { path, headers: accept ? { Accept: accept } : {} });
    expect(res.status).toBe(200);
    return { type: res.headers['content-type'], body: JSON.parse(res.body) as Record<string, unknown> };
  };

  beforeAll(async () => {
    sim = await startKubeSim();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('serves /version and the legacy /api and /apis documents', async () => {
    expect((await getJson('/version')).body).toMatchObject({ major: '1', minor: '32' });
    expect((await getJson('/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${sim.port}` }] });
    const groups = (await getJson('/apis')).body as { kind: string; groups: { name: string; preferredVersion: { groupVersion: string } }[] };
    expect(groups.kind).toBe('APIGroupList');
    expect(groups.groups.map((g) => g.preferredVersion.groupVersion)).toEqual(
      expect.arrayContaining(['apps/v1', 'policy/v1', 'certificates.k8s.io/v1', 'coordination.k8s.io/v1']),
    );
    expect((await getJson('/apis/policy')).body).toMatchObject({ kind: 'APIGroup', name: 'policy' });
  });

  it('lists resources with their subresources, eviction as policy/v1 Eviction', async () => {
    const core = (await getJson('/api/v1')).body as { kind: string; groupVersion: string; resources: ResourceEntry[] };
    expect(core).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
    const byName = new Map(core.resources.map((r) => [r.name, r]));
    expect(byName.get('pods')).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'], verbs: expect.arrayContaining(['list', 'watch', 'delete']) });
    expect(byName.get('pods/eviction')).toMatchObject({ kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] });
    expect(byName.get('nodes/status')).toMatchObject({ kind: 'Node', namespaced: false, verbs: ['get', 'patch', 'update'] });
    const certs = (await getJson('/apis/certificates.k8s.io/v1')).body as { resources: ResourceEntry[] };
    expect(certs.resources.map((r) => r.name)).toEqual(['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status']);
    for (const gv of ['/apis/apps/v1', '/apis/policy/v1', '/apis/coordination.k8s.io/v1']) {
      expect((await getJson(gv)).body).toMatchObject({ kind: 'APIResourceList' });
    }
    expect((await rawRequest(sim, { path: '/apis/batch/v1' })).status).toBe(404);
  });

  it('answers aggregated discovery when the client asks for it', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const res = await getJson('/apis', accept);
    expect(res.type).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const items = res.body['items'] as { metadata: { name: string }; versions: { resources: { resource: string; subresources?: { subresource: string }[] }[] }[] }[];
    const certs = items.find((i) => i.metadata.name === 'certificates.k8s.io');
    expect(certs?.versions[0].resources[0].subresources?.map((s) => s.subresource)).toEqual(['approval', 'status']);
  });
});
