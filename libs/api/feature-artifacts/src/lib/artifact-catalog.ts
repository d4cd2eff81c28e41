import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_KINDS, type Artifact, type ArtifactKind, type ArtifactManifest, isSafeArtifactName } from '@ccos/shared/domain';

/** A manifest entry as stored here: where its file is and when it last changed. */
export interface StoredArtifact extends Artifact {
  readonly path: string;
  readonly modifiedAt: Date;
}

/** The manifest exactly as `GET /artifacts/manifest` sends it, and the sha256 of those bytes. */
export interface ManifestDocument {
  readonly bytes: Buffer;
  /** Lower-case hex. */
  readonly sha256: string;
}

/**
 * The files hosts download during an install (the seed's "download from the installer
 * service on the master"): `<dir>/<kind>/<name>` with kind binary, rpm or unit, and an
 * optional `<dir>/VERSION`. Checksums are computed once per file version (size + mtime).
 */
export class ArtifactCatalog {
  private readonly hashes = new Map<string, { size: number; mtimeMs: number; sha256: string }>();

  constructor(readonly directory: string) {}

  async manifest(): Promise<ArtifactManifest> {
    const version = await this.version();
    const artifacts: Artifact[] = [];
    for (const kind of ARTIFACT_KINDS) {
      const names = await readdir(join(this.directory, kind)).catch(() => [] as string[]);
      for (const name of names.filter(isSafeArtifactName).sort()) {
        const artifact = await this.stored(kind, name, version);
        if (artifact) {
          artifacts.push({ name: artifact.name, kind, size: artifact.size, sha256: artifact.sha256, version: artifact.version });
        }
      }
    }
    return { version, artifacts };
  }

  /**
   * The serialised manifest. Its sha256 goes to the agent over SSH and the agent
   * compares the bytes it downloads with it, so the route must send these very bytes:
   * the same folder always serialises the same way (sorted names, fixed key order).
   */
  async manifestDocument(): Promise<ManifestDocument> {
    const bytes = Buffer.from(JSON.stringify(await this.manifest()), 'utf8');
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  /** One artifact, or null when the kind or name is unknown (or unsafe: no path tricks). */
  async find(kind: string, name: string): Promise<StoredArtifact | null> {
    if (!(ARTIFACT_KINDS as readonly string[]).includes(kind) || !isSafeArtifactName(name)) {
      return null;
    }
    return this.stored(kind as ArtifactKind, name, await this.version());
  }

  /** A checked kind and name's file as the manifest lists it, with the set's `version` (read once per manifest, not per file). */
  private async stored(kind: ArtifactKind, name: string, version: string): Promise<StoredArtifact | null> {
    const path = join(this.directory, kind, name);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) {
      return null;
    }
    return { name, kind, size: info.size, sha256: await this.sha256Of(path, info.size, info.mtimeMs), version, path, modifiedAt: info.mtime };
  }

  private async version(): Promise<string> {
    return (await readFile(join(this.directory, 'VERSION'), 'utf8').catch(() => 'unversioned')).trim();
  }

  private async sha256Of(path: string, size: number, mtimeMs: number): Promise<string> {
    const known = this.hashes.get(path);
    if (known && known.size === size && known.mtimeMs === mtimeMs) {
      return known.sha256;
    }
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) {
      hash.update(chunk as Buffer);
    }
    const sha256 = hash.digest('hex');
    this.hashes.set(path, { size, mtimeMs, sha256 });
    return sha256;
  }
}
