import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactCatalog } from './artifact-catalog';
import { artifactRoutes } from './artifact-routes';
import { parseRange } from './byte-range';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('artifact server', () => {
  let dir: string;
  let server: Server;
  let base: string;
  const kubelet = randomBytes(3 * 1024 * 1024 + 17);
  const auth = { authorization: 'Bearer agt_valid' };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-artifacts-'));
    for (const kind of ['binary', 'rpm', 'unit']) {
      await mkdir(join(dir, kind));
    }
    await writeFile(join(dir, 'binary', 'kubelet'), kubelet);
    await writeFile(join(dir, 'rpm', 'cri-o-1.25.0-1.x86_64.rpm'), 'rpm payload');
    await writeFile(join(dir, 'unit', 'kubelet.service'), '[Service]\nExecStart=/usr/local/bin/kubelet\n');
    await writeFile(join(dir, 'VERSION'), '4.12.0\n');
    const app = express();
    const catalog = new ArtifactCatalog(dir);
    app.use('/artifacts', artifactRoutes(async (header) => (header === 'Bearer agt_valid' ? catalog : null)));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/artifacts`;
  });
  afterAll(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists every artifact with kind, size, sha256 and version', async () => {
    const manifest = await (await fetch(`${base}/manifest`, { headers: auth })).json();
    expect(manifest).toEqual({
      version: '4.12.0',
      artifacts: [
        { name: 'kubelet', kind: 'binary', size: kubelet.length, sha256: sha256(kubelet), version: '4.12.0' },
        { name: 'cri-o-1.25.0-1.x86_64.rpm', kind: 'rpm', size: 11, sha256: sha256(Buffer.from('rpm payload')), version: '4.12.0' },
        expect.objectContaining({ name: 'kubelet.service', kind: 'unit' }),
      ],
    });
  });

  it('sends the manifest as the very bytes whose sha256 the catalog gives (what the agent is told over SSH)', async () => {
    const catalog = new ArtifactCatalog(dir);
    const document = await catalog.manifestDocument();
    const response = await fetch(`${base}/manifest`, { headers: auth });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(sha256(bytes)).toBe(document.sha256);
    expect(response.headers.get('etag')).toBe(`"${document.sha256}"`);
    // The same folder serialises the same way every time, in any process.
    expect((await new ArtifactCatalog(dir).manifestDocument()).sha256).toBe(document.sha256);
    await writeFile(join(dir, 'unit', 'extra.service'), '[Service]\n');
    expect((await catalog.manifestDocument()).sha256).not.toBe(document.sha256);
    await rm(join(dir, 'unit', 'extra.service'));
  });

  it('serves a download in two halves with Range, matching the manifest sha256', async () => {
    const half = Math.floor(kubelet.length / 2);
    const first = await fetch(`${base}/binary/kubelet`, { headers: { ...auth, range: `bytes=0-${half - 1}` } });
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-${half - 1}/${kubelet.length}`);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toBe(`"${sha256(kubelet)}"`);
    const second = await fetch(`${base}/binary/kubelet`, { headers: { ...auth, range: `bytes=${half}-`, 'if-range': etag } });
    expect(second.status).toBe(206);
    const whole = Buffer.concat([Buffer.from(await first.arrayBuffer()), Buffer.from(await second.arrayBuffer())]);
    expect(sha256(whole)).toBe(sha256(kubelet));
  });

  it('sends the whole file when If-Range names another version, and 416 outside the file', async () => {
    const stale = await fetch(`${base}/binary/kubelet`, { headers: { ...auth, range: 'bytes=10-', 'if-range': '"old"' } });
    expect(stale.status).toBe(200);
    expect(Number(stale.headers.get('content-length'))).toBe(kubelet.length);
    await stale.arrayBuffer();
    const outside = await fetch(`${base}/binary/kubelet`, { headers: { ...auth, range: `bytes=${kubelet.length}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${kubelet.length}`);
  });

  it('answers HEAD without a body and 304 for a current copy', async () => {
    const head = await fetch(`${base}/unit/kubelet.service`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get('accept-ranges')).toBe('bytes');
    const cached = await fetch(`${base}/unit/kubelet.service`, { headers: { ...auth, 'if-none-match': head.headers.get('etag') ?? '' } });
    expect(cached.status).toBe(304);
  });

  it('refuses requests without a valid agent token', async () => {
    for (const headers of [{}, { authorization: 'Bearer agt_forged' }] as Array<Record<string, string>>) {
      expect((await fetch(`${base}/manifest`, { headers })).status).toBe(401);
      expect((await fetch(`${base}/binary/kubelet`, { headers })).status).toBe(401);
    }
  });

  it('never serves a path outside the artifact folder', async () => {
    for (const path of ['binary/..%2FVERSION', 'binary/%2E%2E', 'secrets/x', 'binary/.hidden', 'binary/missing']) {
      expect((await fetch(`${base}/${path}`, { headers: auth })).status).toBe(404);
    }
  });
});

describe('parseRange', () => {
  it.each([
    [undefined, null],
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=5-', { start: 5, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=90-200', { start: 90, end: 99 }],
    ['bytes=100-', 'unsatisfiable'],
    ['bytes=9-5', 'unsatisfiable'],
    ['bytes=0-1,5-6', null],
    ['items=0-1', null],
  ])('%s of 100 bytes → %j', (header, expected) => {
    expect(parseRange(header, 100)).toEqual(expected);
  });
});
