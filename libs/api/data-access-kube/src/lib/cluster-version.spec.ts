import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimWithClient, startSimWithClient } from '../testing/kube-sim-fixture';
import { readClusterVersion, releaseOfClusterVersion, releaseOfGitVersion } from './cluster-version';

describe('cluster version', () => {
  let world: SimWithClient;
  beforeAll(async () => {
    world = await startSimWithClient();
  });
  afterAll(async () => {
    await world.stop();
  });

  it('reads /version from a cluster without ClusterVersion (plain Kubernetes)', async () => {
    const reading = await readClusterVersion(world.client);
    expect(reading).toEqual({ version: '1.32.0-kube-sim', source: 'SERVER_VERSION' });
  });

  it('reads OpenShift\'s ClusterVersion when the cluster has one', async () => {
    const admin = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };
    world.sim.api.create(world.sim.resource('customresourcedefinitions'), undefined, {
      metadata: { name: 'clusterversions.config.openshift.io' },
      spec: {
        group: 'config.openshift.io',
        scope: 'Cluster',
        names: { kind: 'ClusterVersion', plural: 'clusterversions', singular: 'clusterversion', listKind: 'ClusterVersionList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    }, { user: admin });
    await world.client.call('create ClusterVersion', (options) => world.client.customObjects.createClusterCustomObject({
      group: 'config.openshift.io', version: 'v1', plural: 'clusterversions',
      body: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { channel: 'stable-4.12' }, status: { desired: { version: '4.12.7' }, history: [{ state: 'Completed', version: '4.12.7' }] } },
    }, options));
    expect(await readClusterVersion(world.client)).toEqual({ version: '4.12.7', source: 'CLUSTER_VERSION' });
  });

  it.each([
    [{ status: { desired: { version: '4.12.7' }, history: [{ state: 'Completed', version: '4.12.5' }] } }, '4.12.7'],
    [{ status: { history: [{ state: 'Partial', version: '4.13.0' }, { state: 'Completed', version: '4.12.5' }] } }, '4.12.5'],
    [{ status: {} }, null],
    [null, null],
  ])('takes the release of ClusterVersion %j', (object, release) => {
    expect(releaseOfClusterVersion(object)).toBe(release);
  });

  it('drops the v and build metadata of a gitVersion', () => {
    expect(releaseOfGitVersion('v1.25.4+77bec7a')).toBe('1.25.4');
  });
});
