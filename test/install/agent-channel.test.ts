import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServerCertificate } from '@ccos/tools/lab';
import { freePort } from '../support/api-process';
import { type TamperingProxy, type TlsImpostor, startTamperingProxy, startTlsImpostor } from '../support/man-in-the-middle';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * A man in the middle between a lab host and the service: the agent must refuse it and
 * install nothing. Each attack gets a proxy on the hosts' path (the lab bridge address)
 * and AGENT_API_URL pointing the hosts at it, so every byte between agent and service
 * crosses the attacker.
 */

interface RunView {
  id: string;
  status: string;
  failedStep: string | null;
  reason: string | null;
  agentChannel: string;
  events: Array<{ seq: number; step: string; status: string; message: string | null; detail: Record<string, unknown> | null }>;
}

const RUNS = `query($id: ID!) { node(id: $id) { status statusReason installRuns { id status failedStep reason agentChannel events { seq step status message detail } } } }`;
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

async function lastRun(world: ScaleOutWorld, nodeId: string): Promise<RunView | undefined> {
  return (await world.gql<{ node: { installRuns: RunView[] } }>(RUNS, { id: nodeId })).data?.node.installRuns.at(-1);
}

/** The host's files the install would have written, read inside the host. */
async function installedFiles(world: ScaleOutWorld, host: string): Promise<{ bin: Record<string, string>; units: string[]; kubeletConfig: boolean }> {
  const listing = await world.lab.exec(host, ['sh', '-c', 'cd /usr/local/bin && for f in * .[!.]*; do [ -f "$f" ] && printf "%s %s\\n" "$(sha256sum < "$f" | cut -d" " -f1)" "$f"; done; true']);
  const bin = Object.fromEntries(listing.stdout.trim().split('\n').filter(Boolean).map((line) => line.split(' ').reverse() as [string, string]));
  const units = (await world.lab.exec(host, ['sh', '-c', 'ls /etc/systemd/system | grep -E "kubelet|ccos" || true'])).stdout.trim().split('\n').filter(Boolean);
  const kubeletConfig = (await world.lab.exec(host, ['test', '-e', '/etc/kubernetes/kubeconfig'], { allowFailure: true })).code === 0;
  return { bin, units, kubeletConfig };
}

describe('a man in the middle on plain HTTP (allowed explicitly) cannot get a changed artifact installed', () => {
  let world: ScaleOutWorld;
  let proxy: TamperingProxy;
  let genuineKubelet: Buffer;
  const nodeIds: string[] = [];

  beforeAll(async () => {
    const proxyPort = await freePort('0.0.0.0');
    world = await startScaleOutWorld({ hosts: 2, apiEnv: (lab) => ({ AGENT_PLAIN_HTTP: 'allow', AGENT_API_URL: `http://${lab.gateway}:${proxyPort}` }) });
    genuineKubelet = await readFile(join(world.lab.artifactsDir, 'binary', 'kubelet'));
    const [h1, h2] = world.lab.hosts;
    proxy = await startTamperingProxy(
      { listen: { host: world.lab.gateway, port: proxyPort }, target: { host: '127.0.0.1', port: world.api.port } },
      genuineKubelet,
      (client) => (client === h1?.ip ? { artifact: 'binary/kubelet', rewriteManifest: false } : client === h2?.ip ? { artifact: 'binary/kubelet', rewriteManifest: true } : null),
    );
    for (const index of [0, 1]) {
      nodeIds.push(await world.addHost(index));
    }
    await Promise.all(nodeIds.map((id) => world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000)));
  }, 300_000);
  afterAll(async () => {
    await proxy?.close();
    await world?.stop();
  });

  it('refuses kubelet with one byte changed, and a manifest changed to match it: nothing forged is installed, nothing at all from the forged manifest', async () => {
    for (const id of nodeIds) {
      const started = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id });
      expect(started.errors).toBeUndefined();
    }
    const settled = await Promise.all(nodeIds.map((id) => world.waitForStatus(id, ['INSTALL_FAILED', 'JOINED', 'STALLED'], 240_000)));
    expect(settled.map((node) => node.status)).toEqual(['INSTALL_FAILED', 'INSTALL_FAILED']);
    const [h1, h2] = world.lab.hosts;
    // The attacker was really there.
    expect(proxy.seen.get(h1?.ip ?? '')?.altered).toBeGreaterThan(0);
    expect(proxy.seen.get(h2?.ip ?? '')?.manifestsRewritten).toBeGreaterThan(0);

    const [byteChanged, manifestChanged] = await Promise.all(nodeIds.map((id) => lastRun(world, id)));
    // Both runs say they were on plain HTTP: on the run and in its own events.
    for (const run of [byteChanged, manifestChanged]) {
      expect(run?.agentChannel).toBe('PLAIN_HTTP');
      expect(run?.events.find((event) => event.detail?.['warning'] === 'PLAIN_HTTP')?.message).toMatch(/^warning: this run talks to the installer service over plain HTTP/);
      expect(run).toMatchObject({ status: 'FAILED', failedStep: 'DOWNLOAD_BINARIES' });
    }

    // h1: the file's checksum is not the manifest's.
    const checksumFailure = byteChanged?.events.find((event) => event.status === 'FAILED');
    expect(checksumFailure?.detail?.['code']).toBe('CHECKSUM_MISMATCH');
    expect(checksumFailure?.message).toMatch(/^binary kubelet: kubelet: sha256 [0-9a-f]{64} does not match the manifest's [0-9a-f]{64} \(downloaded twice\)$/);
    expect(checksumFailure?.detail).toMatchObject({ file: 'kubelet', expected: sha256(genuineKubelet) });

    // h2: the manifest itself is not the one whose sha256 came over SSH, so none of its checksums is believed.
    const manifestFailure = manifestChanged?.events.find((event) => event.status === 'FAILED');
    expect(manifestFailure?.detail?.['code']).toBe('MANIFEST_MISMATCH');
    expect(manifestFailure?.message).toMatch(/^artifact manifest sha256 [0-9a-f]{64} does not match the one received over SSH \([0-9a-f]{64}\); none of its checksums is used$/);
    const pinned = JSON.parse((await world.lab.exec('h2', ['cat', `/opt/ccos-scaler/runs/${manifestChanged?.id}/config.json`])).stdout) as { artifactManifestSha256: string };
    expect(manifestFailure?.message).toContain(`(${pinned.artifactManifestSha256})`);

    // Nothing of the forgery is on either host: no changed kubelet, no part file, nothing after the download step;
    // on h2 nothing at all (the manifest was refused before any download).
    const genuine = new Map((await Promise.all(['coreos-installer', 'hyperkube', 'ignition', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'oc']
      .map(async (name) => [name, sha256(await readFile(join(world.lab.artifactsDir, 'binary', name)))] as const))));
    const onH1 = await installedFiles(world, 'h1');
    expect(onH1.bin['kubelet']).toBeUndefined();
    expect(Object.keys(onH1.bin).filter((name) => name.endsWith('.part'))).toEqual([]);
    // What is there was verified against the manifest: the genuine binaries listed before kubelet.
    for (const [name, digest] of Object.entries(onH1.bin)) {
      expect(genuine.get(name), name).toBe(digest);
    }
    const onH2 = await installedFiles(world, 'h2');
    expect(onH2.bin).toEqual({});
    for (const files of [onH1, onH2]) {
      expect(files.units).toEqual([]);
      expect(files.kubeletConfig).toBe(false);
    }
  }, 400_000);
});

describe('a man in the middle presenting another certificate gets nothing from the agent', () => {
  let world: ScaleOutWorld;
  let impostor: TlsImpostor;
  let impostorFingerprint = '';
  let nodeId = '';

  beforeAll(async () => {
    const port = await freePort('0.0.0.0');
    world = await startScaleOutWorld({ hosts: 1, apiEnv: (lab) => ({ AGENT_API_URL: `https://${lab.gateway}:${port}` }) });
    // As convincing as it gets without the service's CA key: the same CA name, the service's name, the address the host dials.
    const lookalikeCa = await createCertificateAuthority('ccos-scaler agent channel CA');
    const forged = await issueServerCertificate(lookalikeCa, { commonName: 'ccos-scaler', dnsNames: ['localhost'], ips: [world.lab.gateway] });
    impostorFingerprint = new X509Certificate(forged.certPem).fingerprint256;
    impostor = await startTlsImpostor({ listen: { host: world.lab.gateway, port }, target: { host: '127.0.0.1', port: world.api.port } }, forged);
    nodeId = await world.addHost(0);
    await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
  }, 300_000);
  afterAll(async () => {
    await impostor?.close();
    await world?.stop();
  });

  it('refuses the certificate, fails the step saying so, sends no byte (no token) to the impostor, and installs nothing', async () => {
    const started = await world.gql<{ installNode: { id: string } }>('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
    const runId = started.data?.installNode.id ?? '';
    expect(runId).not.toBe('');

    // The agent cannot tell the service anything while the impostor sits there: its events wait in its spool.
    const spooledFailure = async () => {
      const spool = (await world.lab.exec('h1', ['cat', `/opt/ccos-scaler/runs/${runId}/spool.jsonl`], { allowFailure: true })).stdout;
      return spool.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { event?: { status: string; message: string; step: string } })
        .find((line) => line.event?.status === 'FAILED')?.event;
    };
    const deadline = Date.now() + 180_000;
    let failed = await spooledFailure();
    while (!failed && Date.now() < deadline) {
      await new Promise((wake) => setTimeout(wake, 500));
      failed = await spooledFailure();
    }
    expect(failed?.step).toBe('PREFLIGHT');
    expect(failed?.message).toContain(`the service's certificate at ${world.lab.gateway}:`);
    expect(failed?.message).toContain(`(sha256 fingerprint ${impostorFingerprint}, subject "CN=ccos-scaler", issuer "CN=ccos-scaler agent channel CA, OU=openshift")`);
    expect(failed?.message).toContain('is not the pinned one: its chain does not lead to the pinned CA');

    // The agent did connect to the impostor, but not one byte of a request (let alone the bearer token) reached it.
    expect(impostor.impersonated).toBeGreaterThan(0);
    expect(impostor.plaintext().length).toBe(0);
    const token = (JSON.parse((await world.lab.exec('h1', ['cat', `/opt/ccos-scaler/runs/${runId}/config.json`])).stdout) as { token: string }).token;
    expect(impostor.plaintext().toString('latin1')).not.toContain(token);

    const files = await installedFiles(world, 'h1');
    expect(files).toEqual({ bin: {}, units: [], kubeletConfig: false });

    // The attacker leaves (the path now just relays TLS): the same pin accepts the real service and the failure arrives.
    impostor.mode = 'relay';
    const node = await world.waitForStatus(nodeId, ['INSTALL_FAILED'], 120_000);
    expect(node.statusReason).toMatch(/certificate was refused/);
    const run = await lastRun(world, nodeId);
    expect(run).toMatchObject({ id: runId, status: 'FAILED', failedStep: 'PREFLIGHT', agentChannel: 'HTTPS' });
    const reported = run?.events.find((event) => event.status === 'FAILED');
    expect(reported?.message).toContain('is not the pinned one');
    expect(JSON.stringify(reported?.detail)).toContain('installerServiceReachable');
  }, 400_000);
});
