import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

const run = promisify(execFile);

const CLUSTER_SET = `query($c: ID!) { clusterArtifactSet(clusterId: $c) { version versionSource kind setVersion artifacts missing complete } }`;
const SETS = '{ artifactSets { version artifacts manifestSha256 importedAt } }';

interface ClusterSet {
  version: string | null;
  versionSource: string;
  kind: string;
  setVersion: string | null;
  artifacts: number;
  missing: string[];
  complete: boolean;
}

const MANIFEST = 'state onClusterSet artifactSetVersion files { path sha256 step } runningAtInstall { kernelRelease kubeletVersion kubeletFlags } runningNow { kernelRelease kubeletVersion kubeletFlags } runningChanges drift { path expected found } inspectionProblem';

interface Running {
  kernelRelease: string | null;
  kubeletVersion: string | null;
  kubeletFlags: string[];
}

interface HostManifest {
  state: string;
  runningAtInstall: Running | null;
  runningNow: Running | null;
  runningChanges: string[];
  onClusterSet: boolean;
  artifactSetVersion: string | null;
  files: Array<{ path: string; sha256: string; step: string }>;
  drift: Array<{ path: string; expected: string; found: string | null }>;
  inspectionProblem: string | null;
}

interface StoredSet {
  version: string;
  artifacts: number;
  manifestSha256: string;
  importedAt: string;
}

/**
 * An operator's offline install: the service starts with an empty ARTIFACTS_DIR; the release's
 * files (the lab's, as the bootstrap node's install-time server would have them) are imported
 * for the version the cluster reports, then a host installs from them. Broken sets are refused
 * and change nothing.
 */
describe('artifact sets: import, refuse, install', () => {
  let world: ScaleOutWorld;
  let work: string;
  let artifactsDir: string;
  let release: string;
  let nodeId: string;
  let clusterVersion: string;
  let artifactCount: number;

  const clusterSet = async () => (await world.gql<{ clusterArtifactSet: ClusterSet }>(CLUSTER_SET, { c: world.clusterId })).data?.clusterArtifactSet;
  const storedSets = async () => (await world.gql<{ artifactSets: StoredSet[] }>(SETS)).data?.artifactSets ?? [];
  const hostManifest = async () => (await world.gql<{ hostManifest: HostManifest | null }>(`query($n: ID!) { hostManifest(nodeId: $n) { ${MANIFEST} } }`, { n: nodeId })).data?.hostManifest;
  const inspect = async () => {
    const inspected = await world.gql<{ inspectNode: HostManifest }>(`mutation($n: ID!) { inspectNode(nodeId: $n) { ${MANIFEST} } }`, { n: nodeId });
    expect(inspected.errors).toBeUndefined();
    return inspected.data?.inspectNode;
  };

  /** A copy of the release folder, changed by `change`, packed as a tar archive. */
  async function tarOf(name: string, change: (dir: string) => Promise<void>, extraTarArgs: string[] = []): Promise<Buffer> {
    const dir = join(work, name);
    await cp(release, dir, { recursive: true });
    await change(dir);
    const archive = join(work, `${name}.tar`);
    await run('tar', ['-cPf', archive, '-C', dir, 'manifest.json', 'binary', 'rpm', 'unit', ...extraTarArgs]);
    return readFile(archive);
  }

  const upload = (body: Buffer, token: string | null = world.token) =>
    fetch(`${world.api.url}/admin/artifact-sets`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ccos-artifact-sets-'));
    artifactsDir = join(work, 'artifacts');
    world = await startScaleOutWorld({ hosts: 1, name: 'artifact-sets', csrAutoApprove: true, apiEnv: { ARTIFACTS_DIR: artifactsDir } });
    nodeId = await world.addHost(0);
    await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
    // The release as the operator copied it: the lab's files and manifest, for the cluster's own version.
    // What the API read from the cluster (kube-sim's /version; a ClusterVersion on OpenShift).
    clusterVersion = (await clusterSet())?.version ?? '';
    release = join(work, 'release');
    await cp(world.lab.artifactsDir, release, { recursive: true });
    const manifest = JSON.parse(await readFile(join(release, 'manifest.json'), 'utf8')) as { version: string; artifacts: unknown[] };
    artifactCount = manifest.artifacts.length;
    await writeFile(join(release, 'manifest.json'), JSON.stringify({ ...manifest, version: clusterVersion }));
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
    await rm(work, { recursive: true, force: true });
  });

  it('refuses installNode up front with FAILED_PRECONDITION and every missing item while the cluster has no set', async () => {
    expect(clusterVersion).toBe('1.32.0-kube-sim');
    expect(await clusterSet()).toMatchObject({ version: clusterVersion, versionSource: 'SERVER_VERSION', kind: 'NONE', complete: false });
    const refused = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
    const error = refused.errors?.[0];
    expect(error?.extensions?.['code']).toBe('FAILED_PRECONDITION');
    const missing = error?.extensions?.['missing'] as string[];
    expect(missing).toEqual(expect.arrayContaining(['binary/oc', 'binary/hyperkube', 'binary/kubelet', 'unit/kubelet.service', 'rpm/*']));
    expect(error?.message).toMatch(/^the cluster has no artifact set for release 1\.32\.0-kube-sim; missing binary\/oc, binary\/hyperkube, .*npm run artifacts -- import/);
    // Nothing started.
    expect((await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 1_000)).status).toBe('READY_TO_INSTALL');
  });

  it('imports the complete set with npm run artifacts; the cluster then uses it', async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'artifacts', '--', 'import', release, '--dir', artifactsDir]);
    expect(stdout).toContain(`imported release ${clusterVersion}: ${artifactCount} artifacts`);
    expect(artifactCount).toBe(8 + 73 + 2);
    expect(await clusterSet()).toEqual({ version: clusterVersion, versionSource: 'SERVER_VERSION', kind: 'IMPORTED', setVersion: clusterVersion, artifacts: artifactCount, missing: [], complete: true });
  });

  it('refuses uploads with one changed byte, one missing rpm or a path-traversal name, naming the problem, and keeps the set in use', async () => {
    const before = await storedSets();
    expect(before.map((set) => set.version)).toEqual([clusterVersion]);
    const rpms = (await readdir(join(release, 'rpm'))).sort();
    const victim = rpms[5] ?? '';

    const changedByte = await upload(await tarOf('changed-byte', async (dir) => {
      const path = join(dir, 'rpm', victim);
      const bytes = await readFile(path);
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
      await writeFile(path, bytes);
    }));
    expect(changedByte.status).toBe(422);
    const changedBody = (await changedByte.json()) as { error: string; problems: string[] };
    expect(changedBody.problems).toEqual([expect.stringMatching(new RegExp(`^rpm/${victim.replace(/[.+]/g, '\\$&')} has sha256 [0-9a-f]{64}; manifest.json says [0-9a-f]{64}$`))]);

    const missingRpm = await upload(await tarOf('missing-rpm', (dir) => unlink(join(dir, 'rpm', victim))));
    expect(missingRpm.status).toBe(422);
    expect(await missingRpm.json()).toMatchObject({ problems: [], missing: [`rpm/${victim}`], error: `the artifact set was refused: missing rpm/${victim}` });

    await writeFile(join(work, 'planted'), 'not part of any release');
    const traversal = await upload(await tarOf('traversal', async () => undefined, ['../planted']));
    expect(traversal.status).toBe(422);
    expect(((await traversal.json()) as { error: string }).error).toContain('"../planted" climbs out of the set with ".." (path traversal)');

    // Only an ADMIN may upload.
    expect((await upload(Buffer.alloc(0), null)).status).toBe(401);

    // The set in use is the one imported before, byte for byte.
    expect(await storedSets()).toEqual(before);
    expect(await clusterSet()).toMatchObject({ kind: 'IMPORTED', complete: true, artifacts: artifactCount });

    // The same release uploaded whole is taken (201) and serves the same manifest.
    const whole = await upload(await tarOf('whole', async () => undefined));
    expect(whole.status).toBe(201);
    expect(await whole.json()).toMatchObject({ version: clusterVersion, artifacts: artifactCount, manifestSha256: before[0]?.manifestSha256 });
  });

  it('installs the host from the imported set: the agent is pinned to that set\'s manifest', async () => {
    const [stored] = await storedSets();
    const started = await world.gql<{ installNode: { id: string } }>('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
    expect(started.errors).toBeUndefined();
    const runId = started.data?.installNode.id ?? '';
    const settled = await world.waitForStatus(nodeId, ['JOINED', 'INSTALL_FAILED', 'STALLED'], 240_000);
    expect(settled.status).toBe('JOINED');
    const config = JSON.parse((await world.lab.exec('h1', ['cat', `/opt/ccos-scaler/runs/${runId}/config.json`])).stdout) as { artifactManifestSha256: string };
    expect(config.artifactManifestSha256).toBe(stored?.manifestSha256);
  });

  it('records what the host runs; a unit edited by hand is DRIFTED, naming the file, until restored; another set for the cluster makes it OUTDATED', async () => {
    const unit = '/etc/systemd/system/ccos-node-init.service';
    const onHost = async (path: string) => (await world.lab.exec('h1', ['sha256sum', path])).stdout.split(' ')[0];
    const recorded = await hostManifest();
    expect(recorded).toMatchObject({ state: 'UNINSPECTED', onClusterSet: true, artifactSetVersion: clusterVersion, drift: [] });
    const paths = recorded?.files.map((file) => file.path) ?? [];
    expect(paths).toEqual(expect.arrayContaining(['/usr/local/bin/kubelet', unit, '/etc/systemd/system/kubelet.service', '/etc/sysconfig/kubelet', '/etc/kubernetes/kubeconfig']));
    for (const file of recorded?.files ?? []) {
      expect(await onHost(file.path), file.path).toBe(file.sha256);
    }
    expect(recorded?.files.find((file) => file.path === '/etc/systemd/system/kubelet.service')?.step).toBe('APPLY_IGNITION');
    // The kernel and the kubelet systemd started, as the host has them; an inspection reads the same.
    const atInstall = recorded?.runningAtInstall;
    expect(atInstall?.kernelRelease).toBe((await world.lab.exec('h1', ['uname', '-r'])).stdout.trim());
    expect((await world.lab.exec('h1', ['/usr/local/bin/kubelet', '--version'])).stdout).toContain(atInstall?.kubeletVersion ?? 'no version recorded');
    expect(atInstall?.kubeletFlags).toEqual(expect.arrayContaining(['--config=/etc/kubernetes/kubelet.conf', '--kubeconfig=/var/lib/kubelet/kubeconfig']));
    expect(recorded?.runningNow).toBeNull();

    expect(await inspect()).toMatchObject({ state: 'CURRENT', runningNow: atInstall, runningChanges: [] });
    await world.lab.exec('h1', ['sh', '-c', `echo '# edited by hand' >> ${unit}`]);
    const drifted = await inspect();
    expect(drifted).toMatchObject({ state: 'DRIFTED', drift: [{ path: unit, expected: recorded?.files.find((file) => file.path === unit)?.sha256, found: await onHost(unit) }] });
    await world.lab.exec('h1', ['sed', '-i', '$d', unit]);
    expect(await inspect()).toMatchObject({ state: 'CURRENT', drift: [] });

    const next = await upload(await tarOf('next', async (dir) => {
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, version: '9.9.9' }));
    }));
    expect(next.status).toBe(201);
    await world.gql('mutation($c: ID!, $v: String) { setClusterArtifactVersion(clusterId: $c, version: $v) { version } }', { c: world.clusterId, v: '9.9.9' });
    // The cluster's set is read again at most every 10 s.
    await expect.poll(async () => (await hostManifest())?.state, { timeout: 20_000 }).toBe('OUTDATED');
    expect((await hostManifest())?.onClusterSet).toBe(false);
    await world.gql('mutation($c: ID!) { setClusterArtifactVersion(clusterId: $c, version: null) { version } }', { c: world.clusterId });
    await expect.poll(async () => (await hostManifest())?.state, { timeout: 20_000 }).toBe('CURRENT');
  });

  it('an override to a release without a set refuses installs again; clearing it follows the cluster', async () => {
    const overridden = await world.gql<{ setClusterArtifactVersion: ClusterSet }>(
      'mutation($c: ID!, $v: String) { setClusterArtifactVersion(clusterId: $c, version: $v) { version versionSource kind missing complete } }',
      { c: world.clusterId, v: '4.14.2' },
    );
    expect(overridden.data?.setClusterArtifactVersion).toMatchObject({ version: '4.14.2', versionSource: 'OVERRIDE', kind: 'NONE', complete: false });
    const bad = await world.gql('mutation($c: ID!, $v: String) { setClusterArtifactVersion(clusterId: $c, version: $v) { version } }', { c: world.clusterId, v: '../4.12' });
    expect(bad.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    const cleared = await world.gql<{ setClusterArtifactVersion: ClusterSet }>(
      'mutation($c: ID!) { setClusterArtifactVersion(clusterId: $c, version: null) { version versionSource kind complete } }',
      { c: world.clusterId },
    );
    expect(cleared.data?.setClusterArtifactVersion).toEqual({ version: clusterVersion, versionSource: 'SERVER_VERSION', kind: 'IMPORTED', complete: true });
  });
});
