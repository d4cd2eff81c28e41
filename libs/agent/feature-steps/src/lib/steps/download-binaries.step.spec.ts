import { describe, expect, it } from 'vitest';
import { CERT_NOT_PINNED, HttpError } from '@ccos/agent/util-host';
import { artifactBytes, sha256 } from '../../testing/artifact-server';
import { stepHarness, type StepHarness } from '../../testing/step-harness';
import { DownloadBinariesStep, REQUIRED_BINARIES } from './download-binaries.step';

const SIZE = 400_000;

function withBinaries(h: StepHarness = stepHarness()): StepHarness {
  for (const name of REQUIRED_BINARIES) {
    h.server.add('binary', name, artifactBytes(name, SIZE));
  }
  h.server.add('rpm', 'cri-o-1.25.1-1.el9.x86_64.rpm', artifactBytes('cri-o', 1000));
  return h;
}

describe('DOWNLOAD_BINARIES', () => {
  it('puts the 8 binaries in /usr/local/bin (0755, sha256 verified) and reports bytes', async () => {
    const h = withBinaries();
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result.ok).toBe(true);
    for (const name of REQUIRED_BINARIES) {
      expect(h.fs.node(`/usr/local/bin/${name}`)).toMatchObject({ type: 'file', mode: 0o755 });
      expect(await h.fs.sha256(`/usr/local/bin/${name}`)).toBe(sha256(artifactBytes(name, SIZE)));
    }
    expect(h.fs.paths().filter((path) => path.endsWith('.part'))).toEqual([]);
    expect(h.fs.node('/usr/local/bin/cri-o-1.25.1-1.el9.x86_64.rpm')).toBeUndefined();
    expect(result.detail).toMatchObject({ bytes: 8 * SIZE, total: 8 * SIZE, received: 8 * SIZE });
    // What the service records as this host's binaries: each as it is on disk.
    const written = (result.detail as { written: Record<string, string> }).written;
    expect(Object.keys(written).sort()).toEqual(REQUIRED_BINARIES.map((name) => `/usr/local/bin/${name}`).sort());
    for (const [path, hash] of Object.entries(written)) {
      expect(await h.fs.sha256(path)).toBe(hash);
    }
    const last = h.progress.at(-1);
    expect(last).toMatchObject({ progress: 100, detail: { bytes: 8 * SIZE, total: 8 * SIZE } });
  });

  it('reports progress by bytes at most about once a second', async () => {
    const h = withBinaries();
    // Every chunk takes 100 ms of (virtual) time to arrive.
    const download = h.ctx.artifacts.download.bind(h.ctx.artifacts);
    h.ctx.artifacts.download = (artifact, dest, options = {}) => download(artifact, dest, {
      ...options,
      onProgress: (p) => {
        h.clock.elapse(100);
        options.onProgress?.(p);
      },
    });
    await new DownloadBinariesStep().run(h.ctx);
    expect(h.progress.length).toBeGreaterThan(3);
    const times = h.progress.map((p) => p.at);
    const gaps = times.slice(1, -1).map((t, i) => t - (times[i] as number));
    expect(gaps.every((gap) => gap >= 1000)).toBe(true);
    const bytes = h.progress.map((p) => Number((p.detail as { bytes: number }).bytes));
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    expect(h.progress[0]?.message).toMatch(/^downloading oc \(1\/8\): /);
  });

  it('keeps binaries already present and downloads only the rest', async () => {
    const h = withBinaries();
    h.fs.seed({ '/usr/local/bin/kubelet': artifactBytes('kubelet', SIZE), '/usr/local/bin/oc': Buffer.from('an old oc') });
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result.ok).toBe(true);
    const files = (result.detail as { files: { name: string; skipped: boolean }[] }).files;
    expect(files.filter((file) => file.skipped).map((file) => file.name)).toEqual(['kubelet']);
    expect(h.server.seen.filter((request) => request.url.endsWith('/binary/kubelet'))).toHaveLength(0);
    expect(await h.fs.sha256('/usr/local/bin/oc')).toBe(sha256(artifactBytes('oc', SIZE)));
  });

  it('resumes a binary after the link is cut for a while instead of restarting it', async () => {
    const h = withBinaries();
    h.server.breakAfter.push(150_000);
    h.server.refuse.push(0, 0, 0, 0, 0);
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result.ok).toBe(true);
    const first = (result.detail as { files: { name: string; received: number; resumedFrom: number }[] }).files[0];
    expect(first).toMatchObject({ name: 'oc', received: SIZE, resumedFrom: 150_000, resumes: 1 });
    expect(h.progress.some((p) => p.message.startsWith('link interrupted'))).toBe(true);
    const resumed = h.server.seen.find((request) => Object.values(request.headers ?? {}).includes('bytes=150000-'));
    expect(resumed).toBeDefined();
  });

  it('fails naming the file and both hashes when the checksum stays wrong', async () => {
    const h = withBinaries();
    h.server.manifestSha = (name) => (name === 'hyperkube' ? 'f'.repeat(64) : undefined);
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('CHECKSUM_MISMATCH');
      expect(result.message).toContain('hyperkube');
      expect(result.detail).toMatchObject({ file: 'hyperkube', expected: 'f'.repeat(64), actual: sha256(artifactBytes('hyperkube', SIZE)) });
    }
    expect(h.fs.node('/usr/local/bin/hyperkube')).toBeUndefined();
  });

  it('refuses a manifest changed on the way (checksums to match changed files) and downloads nothing', async () => {
    const h = withBinaries();
    h.server.pinManifest();
    h.server.files.get('binary/kubelet')?.data.fill(0x90, 0, 16);
    h.server.manifestSha = (name) => (name === 'kubelet' ? sha256(h.server.files.get('binary/kubelet')?.data ?? Buffer.alloc(0)) : undefined);
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'MANIFEST_MISMATCH' });
    expect(result.ok ? '' : result.message).toMatch(/^artifact manifest sha256 [0-9a-f]{64} does not match the one received over SSH \([0-9a-f]{64}\)/);
    expect(result.ok ? '' : result.hint).toContain('a new run pins the manifest');
    expect(h.server.seen.map((request) => request.url)).toEqual([`${h.config.apiUrl}/artifacts/manifest`]);
    expect(h.fs.paths().filter((path) => path.startsWith('/usr/local/bin/'))).toEqual([]);
  });

  it('fails at once, naming the certificate, when whoever answers is not the pinned service', async () => {
    const h = withBinaries();
    h.routes.push(() => {
      throw new HttpError("the service's certificate at 198.18.0.1:4000 (sha256 fingerprint AA:BB, subject \"CN=mitm\", issuer \"CN=mitm\") is not the pinned one: its chain does not lead to the pinned CA", CERT_NOT_PINNED);
    });
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'SERVICE_CERT_REFUSED', message: expect.stringContaining("the service's certificate at 198.18.0.1:4000") });
    expect(result.ok ? '' : result.hint).toContain('Nothing was sent to it');
    expect(h.clock.monotonic()).toBe(0);
    expect(h.fs.paths().filter((path) => path.startsWith('/usr/local/bin/'))).toEqual([]);
  });

  it('fails when the manifest lacks a required binary', async () => {
    const h = stepHarness();
    h.server.add('binary', 'kubelet', Buffer.from('x'));
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'ARTIFACT_MISSING' });
    expect(result.ok ? '' : result.message).toContain('oc, hyperkube, kube-apiserver');
  });

  it('waits for the service to come back for the manifest', async () => {
    const h = withBinaries();
    h.server.refuse.push(0, 0, 0);
    const result = await new DownloadBinariesStep().run(h.ctx);
    expect(result.ok).toBe(true);
    expect(h.log.text()).toContain('manifest:');
  });
});
