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
