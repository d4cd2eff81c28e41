import { createHash } from 'node:crypto';
import type { Artifact, ArtifactKind } from '@ccos/agent/data-access-api';
import type { HttpRequest } from '@ccos/agent/util-host';
import type { FakeHttpReply } from '@ccos/agent/util-host/testing';

/** Deterministic artifact bytes. */
export function artifactBytes(name: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) {
    out[i] = (name.charCodeAt(i % name.length) + i) & 0xff;
  }
  return out;
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The installer service's artifact routes as the contract describes them:
 * manifest, `GET /artifacts/<kind>/<name>` with ETag, Range → 206 and
 * If-Range, 401 without the token. `breakAfter` cuts the next responses.
 */
export class FakeArtifactServer {
  readonly files = new Map<string, { readonly kind: ArtifactKind; readonly name: string; data: Buffer; sha: string }>();
  /** Body bytes after which each of the next responses breaks (consumed one per request). */
  readonly breakAfter: number[] = [];
  /** Requests that fail to connect, one per entry (consumed in order). */
  readonly refuse: number[] = [];
  /** When set, the manifest advertises this sha256 for every file (a changed/corrupt artifact). */
  manifestSha: ((name: string) => string | undefined) | null = null;
  readonly seen: HttpRequest[] = [];
  private pinned: string | null = null;

  constructor(
    readonly apiUrl: string,
    readonly token: string,
  ) {}

  add(kind: ArtifactKind, name: string, data: Buffer): this {
    this.files.set(`${kind}/${name}`, { kind, name, data, sha: sha256(data) });
    return this;
  }

  manifestArtifacts(): Artifact[] {
    return [...this.files.values()].map((file) => ({
      name: file.name,
      kind: file.kind,
      size: file.data.length,
      sha256: this.manifestSha?.(file.name) ?? file.sha,
      version: '4.12.0-lab.1',
    }));
  }

  /** The exact bytes `GET /artifacts/manifest` answers now. */
  manifestBody(): string {
    return JSON.stringify({ version: '4.12.0-lab.1', artifacts: this.manifestArtifacts() });
  }

  /** The sha256 the run's config pins: the current manifest's, or the one frozen by {@link pinManifest}. */
  pinnedManifestSha256(): string {
    return this.pinned ?? sha256(Buffer.from(this.manifestBody()));
  }

  /** Pins the manifest as it is now; a later change (an attacker's, say) no longer matches. */
  pinManifest(): this {
    this.pinned = sha256(Buffer.from(this.manifestBody()));
    return this;
  }

  /** A FakeHttp route: the reply, or undefined for URLs it does not serve. */
  handle(request: HttpRequest): FakeHttpReply | undefined {
    if (!request.url.startsWith(`${this.apiUrl}/artifacts/`)) {
      return undefined;
    }
    this.seen.push(request);
    const header = (name: string) => Object.entries(request.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
    if (header('authorization') !== `Bearer ${this.token}`) {
      return { status: 401, body: 'unauthorized' };
    }
    const path = request.url.slice(`${this.apiUrl}/artifacts/`.length);
    if (path === 'manifest') {
      return { status: 200, headers: { 'content-type': 'application/json' }, body: this.manifestBody() };
    }
    const file = this.files.get(decodeURIComponent(path));
    if (file === undefined) {
      return { status: 404, body: 'not found' };
    }
    const cut = this.breakAfter.shift();
    const range = /^bytes=(\d+)-$/.exec(header('range') ?? '');
    const ifRange = header('if-range');
    if (range !== null && (ifRange === undefined || ifRange === `"${file.sha}"`)) {
      const start = Number(range[1]);
      if (start >= file.data.length) {
        return { status: 416, headers: { 'content-range': `bytes */${file.data.length}` } };
      }
      return {
        status: 206,
        headers: { etag: `"${file.sha}"`, 'content-range': `bytes ${start}-${file.data.length - 1}/${file.data.length}` },
        body: file.data.subarray(start),
        chunkSize: 64 * 1024,
        ...(cut === undefined ? {} : { breakAfterBytes: cut }),
      };
    }
    return {
      status: 200,
      headers: { etag: `"${file.sha}"`, 'accept-ranges': 'bytes' },
      body: file.data,
      chunkSize: 64 * 1024,
      ...(cut === undefined ? {} : { breakAfterBytes: cut }),
    };
  }
}
