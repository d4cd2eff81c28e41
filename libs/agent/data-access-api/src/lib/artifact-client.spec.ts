import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CERT_NOT_PINNED, HttpError, type HttpRequest, type TlsPin } from '@ccos/agent/util-host';
import { FakeClock, FakeHttp, MemoryFileSystem, MemoryLogger, requestHeader, type FakeHttpReply } from '@ccos/agent/util-host/testing';
import type { Artifact } from '@ccos/shared/domain';
import { ApiError } from './api-errors';
import { ArtifactClient, DownloadError, MANIFEST_MISMATCH } from './artifact-client';

const API = 'http://198.18.0.1:4000';
const TOKEN = 'agt_secret-token';
const DATA = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) & 0xff));
const SHA = createHash('sha256').update(DATA).digest('hex');
const ARTIFACT: Artifact = { name: 'kubelet', kind: 'binary', size: DATA.length, sha256: SHA, version: '1' };
const DEST = '/usr/local/bin/kubelet';

/** The contract's artifact route, with a script of how each request goes. */
function server(script: ((request: HttpRequest, index: number) => FakeHttpReply | 'refuse' | undefined)[] = []) {
  let index = 0;
  const http = new FakeHttp((request) => {
    const scripted = script[index]?.(request, index);
    index += 1;
    if (scripted === 'refuse') {
      throw new HttpError('connect ECONNREFUSED', 'ECONNREFUSED');
    }
    if (scripted !== undefined) {
      return scripted;
    }
    return serve(request, DATA);
  });
  return http;
}

function serve(request: HttpRequest, data: Buffer, breakAfterBytes?: number): FakeHttpReply {
  if (requestHeader(request, 'authorization') !== `Bearer ${TOKEN}`) {
    return { status: 401 };
  }
  const range = /^bytes=(\d+)-$/.exec(requestHeader(request, 'range') ?? '');
  const sha = createHash('sha256').update(data).digest('hex');
  if (range && requestHeader(request, 'if-range') === `"${sha}"`) {
    const start = Number(range[1]);
    return { status: 206, headers: { 'content-range': `bytes ${start}-${data.length - 1}/${data.length}` }, body: data.subarray(start), chunkSize: 32_768, ...(breakAfterBytes === undefined ? {} : { breakAfterBytes }) };
  }
  return { status: 200, headers: { etag: `"${sha}"` }, body: data, chunkSize: 32_768, ...(breakAfterBytes === undefined ? {} : { breakAfterBytes }) };
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const MANIFEST = JSON.stringify({ version: '1', artifacts: [{ name: 'kubelet', kind: 'binary', size: DATA.length, sha256: SHA, version: '1' }] });

function client(http: FakeHttp, fs = new MemoryFileSystem().seed({ '/usr/local/bin/.keep': '' }), clock = new FakeClock(), pins: { manifestSha256?: string; serviceTls?: TlsPin | null } = {}) {
  const log = new MemoryLogger();
  const artifacts = new ArtifactClient({
    apiUrl: API, token: TOKEN, http, fs, clock, log, random: () => 0.5,
    serviceTls: pins.serviceTls ?? null,
    manifestSha256: pins.manifestSha256 ?? sha256(MANIFEST),
  });
  return { fs, clock, log, artifacts };
}

describe('ArtifactClient.download', () => {
  it('downloads with the token, verifies the sha256 and renames the .part into place with the mode', async () => {
    const http = server();
    const { fs, artifacts } = client(http);
    const progress: number[] = [];
    const result = await artifacts.download(ARTIFACT, DEST, { mode: 0o755, onProgress: (p) => progress.push(p.bytes) });
    expect(result).toMatchObject({ skipped: false, resumedFrom: 0, resumes: 0, received: DATA.length, attempts: 1 });
    expect(fs.node(DEST)).toMatchObject({ type: 'file', mode: 0o755 });
    expect(await fs.sha256(DEST)).toBe(SHA);
    expect(fs.node(`${DEST}.part`)).toBeUndefined();
    expect(http.requests[0]?.url).toBe(`${API}/artifacts/binary/kubelet`);
    expect(progress.at(-1)).toBe(DATA.length);
  });

  it('fsyncs the file before it takes its name, unless told the file is used at once (durable: false)', async () => {
    const durable = client(server());
    await durable.artifacts.download(ARTIFACT, DEST, { mode: 0o755 });
    expect(durable.fs.synced).toContain(`${DEST}.part`);
    const transient = client(server());
    await transient.artifacts.download(ARTIFACT, DEST, { mode: 0o644, durable: false });
    expect(await transient.fs.sha256(DEST)).toBe(SHA);
    expect(transient.fs.synced).not.toContain(`${DEST}.part`);
  });

  it('resumes after the link breaks, with Range and If-Range, instead of starting over', async () => {
    const http = server([(request) => serve(request, DATA, 100_000), () => 'refuse', () => 'refuse']);
    const { fs, artifacts, clock } = client(http);
    const retries: string[] = [];
    const result = await artifacts.download(ARTIFACT, DEST, { onRetry: (info) => retries.push(info.reason) });
    expect(await fs.sha256(DEST)).toBe(SHA);
    const last = http.requests.at(-1) as HttpRequest;
    expect(requestHeader(last, 'range')).toBe('bytes=100000-');
    expect(requestHeader(last, 'if-range')).toBe(`"${SHA}"`);
    expect(result.received).toBe(DATA.length);
    expect(result).toMatchObject({ resumedFrom: 100_000, resumes: 1 });
    expect(retries).toHaveLength(3);
    expect(clock.monotonic()).toBeGreaterThan(0);
  });

  it('continues a .part left by an earlier run', async () => {
    const http = server();
    const fs = new MemoryFileSystem().seed({ [`${DEST}.part`]: DATA.subarray(0, 123_456) });
    const { artifacts } = client(http, fs);
    const result = await artifacts.download(ARTIFACT, DEST);
    expect(result.resumedFrom).toBe(123_456);
    expect(result.received).toBe(DATA.length - 123_456);
    expect(requestHeader(http.requests[0] as HttpRequest, 'range')).toBe('bytes=123456-');
    expect(await fs.sha256(DEST)).toBe(SHA);
  });

  it.each([
    ['written whole here', {}, []],
    ['resumed here after a cut link', { breakAfter: 100_000 }, []],
    ['continued from a .part an earlier agent left', { seeded: 123_456 }, [`${DEST}.part`]],
  ] as const)('hashes the bytes as they arrive: a part %s is read back only when others wrote some of it', async (_case, setup, readBack) => {
    const http = server('breakAfter' in setup ? [(request) => serve(request, DATA, setup.breakAfter), () => 'refuse'] : []);
    const fs = new MemoryFileSystem().seed('seeded' in setup ? { [`${DEST}.part`]: DATA.subarray(0, setup.seeded) } : { '/usr/local/bin/.keep': '' });
    const hashed: string[] = [];
    const sha256OfFile = fs.sha256.bind(fs);
    fs.sha256 = (path: string) => {
      hashed.push(path);
      return sha256OfFile(path);
    };
    const { artifacts } = client(http, fs);
    const result = await artifacts.download(ARTIFACT, DEST);
    expect(result.sha256).toBe(SHA);
    expect(hashed.filter((path) => path !== DEST)).toEqual(readBack);
  });

  it('starts over when the server answers a range request with the whole (changed) file', async () => {
    const http = server([(request) => ({ ...serve(request, DATA), status: 200, headers: {} })]);
    const fs = new MemoryFileSystem().seed({ [`${DEST}.part`]: Buffer.from('stale bytes of an older version') });
    const { artifacts } = client(http, fs);
    await artifacts.download(ARTIFACT, DEST);
    expect(await fs.sha256(DEST)).toBe(SHA);
  });

  it('on a sha256 mismatch deletes the file and downloads once more, then fails naming file and both hashes', async () => {
    const wrong = Buffer.from(DATA);
    wrong[5] = (wrong[5] as number) ^ 0xff;
    const http = server([(request) => serve(request, wrong), (request) => serve(request, wrong)]);
    const { fs, artifacts } = client(http);
    const error = await artifacts.download(ARTIFACT, DEST).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    const actual = createHash('sha256').update(wrong).digest('hex');
    expect(error).toMatchObject({ code: 'CHECKSUM_MISMATCH', detail: { file: 'kubelet', expected: SHA, actual } });
    expect((error as Error).message).toContain(actual);
    expect(http.requests).toHaveLength(2);
    expect(fs.node(DEST)).toBeUndefined();
    expect(fs.node(`${DEST}.part`)).toBeUndefined();
  });

  it('recovers when only the first copy was corrupt', async () => {
    const wrong = Buffer.alloc(DATA.length);
    const http = server([(request) => serve(request, wrong)]);
    const { fs, artifacts } = client(http);
    await artifacts.download(ARTIFACT, DEST);
    expect(await fs.sha256(DEST)).toBe(SHA);
  });

  it('skips a file that is already there with the right checksum', async () => {
    const http = server();
    const fs = new MemoryFileSystem().seed({ [DEST]: DATA }, 0o700);
    const { artifacts } = client(http, fs);
    const result = await artifacts.download(ARTIFACT, DEST, { mode: 0o755 });
    expect(result.skipped).toBe(true);
    expect(http.requests).toHaveLength(0);
    expect(fs.node(DEST)?.mode).toBe(0o755);
  });

  it('gives up after the stall limit without a byte, naming the last error', async () => {
    const http = new FakeHttp(() => {
      throw new HttpError('connect ETIMEDOUT 198.18.0.1:4000', 'ETIMEDOUT');
    });
    const { artifacts } = client(http);
    const error = await artifacts.download(ARTIFACT, DEST).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'NETWORK_UNREACHABLE' });
    expect((error as Error).message).toContain('ETIMEDOUT');
  });

  it('keeps retrying while bytes trickle in, however long it takes', async () => {
    let offset = 0;
    const http = new FakeHttp((request) => {
      const range = /^bytes=(\d+)-$/.exec(requestHeader(request, 'range') ?? '');
      offset = range ? Number(range[1]) : 0;
      const reply = serve(request, DATA, 20_000);
      return offset + 20_000 >= DATA.length ? serve(request, DATA) : reply;
    });
    const { fs, artifacts } = client(http, undefined, new FakeClock());
    await artifacts.download(ARTIFACT, DEST);
    expect(await fs.sha256(DEST)).toBe(SHA);
    expect(http.requests.length).toBeGreaterThan(10);
  });

  it('treats 401 as the end of the run and 404 as a missing artifact', async () => {
    const unauth = await client(server([() => ({ status: 401 })])).artifacts.download(ARTIFACT, DEST).catch((e: unknown) => e);
    expect(unauth).toBeInstanceOf(ApiError);
    expect(unauth).toMatchObject({ kind: 'unauthenticated' });
    const missing = await client(server([() => ({ status: 404 })])).artifacts.download(ARTIFACT, DEST).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'ARTIFACT_NOT_FOUND' });
  });

  it('names a full disk', async () => {
    const fs = new MemoryFileSystem().seed({ '/usr/local/bin/.keep': '' }).failWith('ENOSPC', (path, op) => path.endsWith('.part') && op === 'write');
    const error = await client(server(), fs).artifacts.download(ARTIFACT, DEST).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'DISK_WRITE_FAILED', detail: { errno: 'ENOSPC' } });
  });
});

describe('ArtifactClient.manifest', () => {
  it('parses the manifest whose bytes are the pinned ones, and classifies failures', async () => {
    const ok = client(new FakeHttp(() => ({ status: 200, body: MANIFEST })));
    expect((await ok.artifacts.manifest()).artifacts).toEqual([expect.objectContaining({ name: 'kubelet', sha256: SHA })]);
    const down = client(new FakeHttp(() => ({ status: 503, body: 'restarting' })));
    await expect(down.artifacts.manifest()).rejects.toMatchObject({ kind: 'transient' });
    const invalid = '{"artifacts":[{"name":"../x"}]}';
    const bad = client(new FakeHttp(() => ({ status: 200, body: invalid })), undefined, undefined, { manifestSha256: sha256(invalid) });
    await expect(bad.artifacts.manifest()).rejects.toMatchObject({ kind: 'rejected', code: 'BAD_MANIFEST' });
  });

  it.each([
    ['another checksum for kubelet (to match an altered file)', MANIFEST.replace(SHA, sha256('evil kubelet'))],
    ['the same content, re-serialised', JSON.stringify(JSON.parse(MANIFEST), null, 1)],
    ['one more artifact', MANIFEST.replace(']}', ',{"name":"backdoor","kind":"unit","size":1,"sha256":"' + 'b'.repeat(64) + '","version":"1"}]}')],
  ])('refuses a manifest with %s: its bytes are not the ones pinned over SSH', async (_name, served) => {
    const { artifacts } = client(new FakeHttp(() => ({ status: 200, body: served })));
    const error = await artifacts.manifest().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      kind: 'rejected',
      code: MANIFEST_MISMATCH,
      message: `artifact manifest sha256 ${sha256(served)} does not match the one received over SSH (${sha256(MANIFEST)}); none of its checksums is used`,
    });
  });

  it('sends the service pin with every request and does not wait out a refused certificate', async () => {
    const pin: TlsPin = { caCertificates: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' };
    const refusing = new FakeHttp(() => {
      throw new HttpError("the service's certificate at 198.18.0.1:4000 (…) is not the pinned one: its chain does not lead to the pinned CA", CERT_NOT_PINNED);
    });
    const { artifacts, clock } = client(refusing, undefined, undefined, { serviceTls: pin });
    await expect(artifacts.manifest()).rejects.toMatchObject({ kind: 'rejected', code: CERT_NOT_PINNED, message: expect.stringContaining('is not the pinned one') });
    const download = await artifacts.download(ARTIFACT, DEST).catch((e: unknown) => e);
    expect(download).toBeInstanceOf(DownloadError);
    expect(download).toMatchObject({ code: 'SERVICE_CERT_REFUSED', message: expect.stringContaining('kubelet: the service\'s certificate') });
    expect(refusing.requests.map((request) => request.pin)).toEqual([pin, pin]);
    expect(clock.monotonic()).toBe(0);
  });
});
