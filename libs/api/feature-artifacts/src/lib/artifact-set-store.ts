import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, lstat, mkdir, readFile, readdir, readlink, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  ARTIFACT_KINDS, type Artifact, type ArtifactManifest, isSafeArtifactName, isSafeReleaseVersion, missingArtifacts, parseManifest,
} from '@ccos/shared/domain';
import { ArtifactCatalog } from './artifact-catalog';
import { readTar } from './tar-reader';

/** The file at the top of every set that says what the set is: `{ version, artifacts: [{ kind, name, size, sha256 }] }`. */
export const SET_MANIFEST = 'manifest.json';

/** Why an import was refused: every problem found, and what the set lacks. Nothing was stored. */
export class ArtifactImportError extends Error {
  constructor(
    readonly problems: readonly string[],
    readonly missing: readonly string[] = [],
  ) {
    super(`the artifact set was refused: ${[...problems, ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : [])].join('; ')}`);
    this.name = 'ArtifactImportError';
  }
}

/** An imported set as the store keeps it. */
export interface ArtifactSetSummary {
  readonly version: string;
  readonly artifacts: number;
  readonly bytes: number;
  readonly importedAt: Date;
  /** sha256 of the manifest the agent is given for this set. */
  readonly manifestSha256: string;
}

/**
 * Release artifact sets for offline installs, one per release version, under
 * `<root>/sets/<version>` (a symlink to `<root>/sets/.store/<version>.<random>`). An import is
 * checked completely in a staging folder, then made current by renaming a new symlink over
 * the old one: readers see the whole previous set or the whole new one, never a mix, and a
 * refused import leaves the previous set as it was.
 *
 * The files at the top of `<root>` (`binary/`, `rpm/`, `unit/`, `VERSION`) are the default set,
 * served to clusters whose version has no imported set (the layout of ARTIFACTS_DIR before sets).
 */
export class ArtifactSetStore {
  private readonly catalogs = new Map<string, ArtifactCatalog>();
  readonly defaultCatalog: ArtifactCatalog;
  /** Serves nothing (a cluster overridden to a release without a set). */
  readonly emptyCatalog: ArtifactCatalog;

  constructor(readonly root: string) {
    this.defaultCatalog = new ArtifactCatalog(root);
    this.emptyCatalog = new ArtifactCatalog(join(root, 'sets', '.none'));
  }

  private get setsDir(): string {
    return join(this.root, 'sets');
  }

  /** Imports a folder laid out as `manifest.json` + `<kind>/<name>`. */
  async importFolder(folder: string): Promise<ArtifactSetSummary> {
    const manifestText = await readFile(join(folder, SET_MANIFEST), 'utf8').catch(() => null);
    if (manifestText === null) {
      throw new ArtifactImportError([`${folder} has no ${SET_MANIFEST} (the list of files with size and sha256 that comes with the release)`]);
    }
    const manifest = checkedManifest(manifestText);
    const staging = await this.newStaging();
    try {
      const problems: string[] = [];
      const present = new Set<string>();
      for (const kind of ARTIFACT_KINDS) {
        const names = await readdir(join(folder, kind)).catch(() => [] as string[]);
        for (const name of names) {
          const source = join(folder, kind, name);
          const info = await lstat(source);
          if (!isSafeArtifactName(name)) {
            problems.push(`${kind}/${name} is not a plain file name`);
          } else if (!info.isFile()) {
            problems.push(`${kind}/${name} is not a regular file (links are not followed)`);
          } else {
            await mkdir(join(staging, kind), { recursive: true });
            await copyFile(source, join(staging, kind, name));
            present.add(`${kind}/${name}`);
          }
        }
      }
      return await this.commit(staging, manifest, present, problems);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * Imports a tar archive (as streamed by an upload or read from a file): `manifest.json` and
   * `<kind>/<name>` members, optionally all under one top folder. A member whose path leaves
   * the set (absolute, `..`, a link) refuses the whole archive.
   */
  async importTar(source: AsyncIterable<Uint8Array>): Promise<ArtifactSetSummary> {
    const staging = await this.newStaging();
    try {
      const problems: string[] = [];
      const files = new Map<string, string>();
      let manifestText: string | null = null;
      try {
        await readTar(source, async (entry, content) => {
          const problem = unsafeMemberPath(entry.path);
          if (problem) {
            problems.push(problem);
            return;
          }
          if (entry.type === 'directory') {
            return;
          }
          if (entry.type !== 'file') {
            problems.push(`${entry.path} is a link or special file (tar type ${JSON.stringify(entry.typeflag)}); only regular files are taken`);
            return;
          }
          if (files.size > 10_000) {
            problems.push('the archive has more than 10000 files');
            return;
          }
          if (posix.basename(entry.path) === SET_MANIFEST && entry.size > 16 * 1024 * 1024) {
            problems.push(`${entry.path} is larger than 16 MiB`);
            return;
          }
          const stored = join(staging, 'incoming', String(files.size));
          await mkdir(join(staging, 'incoming'), { recursive: true });
          files.set(posix.normalize(entry.path).replace(/^\.\//, ''), stored);
          await pipeline(content, createWriteStream(stored, { mode: 0o644 }));
        });
      } catch (error) {
        throw new ArtifactImportError([(error as Error).message]);
      }
      if (problems.length > 0) {
        throw new ArtifactImportError(problems);
      }
      const top = commonTopFolder([...files.keys()]);
      const present = new Set<string>();
      for (const [path, stored] of files) {
        const relative = top ? path.slice(top.length + 1) : path;
        if (relative === SET_MANIFEST) {
          manifestText = await readFile(stored, 'utf8');
          continue;
        }
        const [kind, name, ...deeper] = relative.split('/');
        if (!kind || !name || deeper.length > 0 || !(ARTIFACT_KINDS as readonly string[]).includes(kind)) {
          problems.push(`${path} is not ${SET_MANIFEST} or <binary|rpm|unit>/<name>`);
          continue;
        }
        if (!isSafeArtifactName(name)) {
          problems.push(`${path}: ${JSON.stringify(name)} is not a plain file name`);
          continue;
        }
        await mkdir(join(staging, kind), { recursive: true });
        await rename(stored, join(staging, kind, name));
        present.add(`${kind}/${name}`);
      }
      if (manifestText === null) {
        throw new ArtifactImportError([`the archive has no ${SET_MANIFEST} (the list of files with size and sha256 that comes with the release)`, ...problems]);
      }
      await rm(join(staging, 'incoming'), { recursive: true, force: true });
      return await this.commit(staging, checkedManifest(manifestText), present, problems);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Every imported set, by version. */
  async list(): Promise<ArtifactSetSummary[]> {
    const entries = await readdir(this.setsDir).catch(() => [] as string[]);
    const sets: ArtifactSetSummary[] = [];
    for (const version of entries.filter((entry) => !entry.startsWith('.') && isSafeReleaseVersion(entry)).sort()) {
      const summary = await this.summary(version);
      if (summary) {
        sets.push(summary);
      }
    }
    return sets;
  }

  /** Whether any set was imported (so clusters need not be asked their version otherwise). */
  async hasSets(): Promise<boolean> {
    const entries = await readdir(this.setsDir).catch(() => [] as string[]);
    return entries.some((entry) => !entry.startsWith('.'));
  }

  async summary(version: string): Promise<ArtifactSetSummary | null> {
    const catalog = await this.catalog(version);
    if (!catalog) {
      return null;
    }
    const manifest = await catalog.manifest();
    const info = await stat(join(this.setsDir, version, SET_MANIFEST)).catch(() => null);
    return {
      version,
      artifacts: manifest.artifacts.length,
      bytes: manifest.artifacts.reduce((sum, artifact) => sum + artifact.size, 0),
      importedAt: info?.mtime ?? new Date(0),
      manifestSha256: (await catalog.manifestDocument()).sha256,
    };
  }

  /** The catalog serving one imported set, or null when that version was never imported. */
  async catalog(version: string): Promise<ArtifactCatalog | null> {
    if (!isSafeReleaseVersion(version)) {
      return null;
    }
    // The link's target changes with every import of the version: one catalog (and hash cache) per target.
    const target = await realpath(join(this.setsDir, version)).catch(() => null);
    if (!target) {
      return null;
    }
    let catalog = this.catalogs.get(target);
    if (!catalog) {
      catalog = new ArtifactCatalog(target);
      this.catalogs.set(target, catalog);
    }
    return catalog;
  }

  private async newStaging(): Promise<string> {
    const staging = join(this.setsDir, `.staging-${randomBytes(6).toString('hex')}`);
    await mkdir(staging, { recursive: true });
    return staging;
  }

  /** Checks the staged files against the manifest; only a set without a single problem becomes current. */
  private async commit(staging: string, manifest: ArtifactManifest, present: Set<string>, problems: string[]): Promise<ArtifactSetSummary> {
    const missing = missingArtifacts(manifest.artifacts).map((item) => `${item} (not in ${SET_MANIFEST})`);
    const listed = new Set<string>();
    for (const artifact of manifest.artifacts) {
      const key = `${artifact.kind}/${artifact.name}`;
      listed.add(key);
      if (!present.has(key)) {
        missing.push(key);
        continue;
      }
      const path = join(staging, artifact.kind, artifact.name);
      const size = (await stat(path)).size;
      if (size !== artifact.size) {
        problems.push(`${key} has ${size} bytes; ${SET_MANIFEST} says ${artifact.size}`);
        continue;
      }
      const sha256 = await sha256Of(path);
      if (sha256 !== artifact.sha256) {
        problems.push(`${key} has sha256 ${sha256}; ${SET_MANIFEST} says ${artifact.sha256}`);
      }
    }
    for (const key of [...present].filter((item) => !listed.has(item)).sort()) {
      problems.push(`${key} is not listed in ${SET_MANIFEST}`);
    }
    if (problems.length > 0 || missing.length > 0) {
      throw new ArtifactImportError(problems, missing);
    }
    await writeFile(join(staging, 'VERSION'), `${manifest.version}\n`);
    await writeFile(join(staging, SET_MANIFEST), JSON.stringify(manifest, null, 2));
    const store = join(this.setsDir, '.store');
    await mkdir(store, { recursive: true });
    const target = join(store, `${manifest.version}.${randomBytes(6).toString('hex')}`);
    await rename(staging, target);
    const link = join(this.setsDir, manifest.version);
    const previous = await readlink(link).catch(() => null);
    const next = join(this.setsDir, `.link-${randomBytes(6).toString('hex')}`);
    await symlink(posix.join('.store', posix.basename(target)), next);
    // rename(2) over the old link is atomic: a reader resolves the old set or the new one.
    await rename(next, link);
    if (previous) {
      // Downloads of the old files already open keep reading them (an unlinked file lives while open).
      await rm(join(this.setsDir, previous), { recursive: true, force: true });
      this.catalogs.delete(join(this.setsDir, previous));
    }
    const summary = await this.summary(manifest.version);
    if (!summary) {
      throw new Error(`the set ${manifest.version} vanished right after its import`);
    }
    return summary;
  }
}

function checkedManifest(text: string): ArtifactManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ArtifactImportError([`${SET_MANIFEST} is not JSON: ${(error as Error).message}`]);
  }
  let manifest: ArtifactManifest;
  try {
    manifest = parseManifest(value);
  } catch (error) {
    throw new ArtifactImportError([`${SET_MANIFEST}: ${(error as Error).message}`]);
  }
  if (!isSafeReleaseVersion(manifest.version)) {
    throw new ArtifactImportError([`${SET_MANIFEST}.version ${JSON.stringify(manifest.version)} is not a release version (e.g. 4.12.0; letters, digits, . _ + - only)`]);
  }
  // Every entry carries the set's version, whatever the release's own file said.
  return { version: manifest.version, artifacts: manifest.artifacts.map((artifact): Artifact => ({ ...artifact, version: manifest.version })) };
}

/** Why a tar member's path may not be taken, or null. */
function unsafeMemberPath(path: string): string | null {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\')) {
    return `${JSON.stringify(path)} is an absolute path; the set's files must lie inside it`;
  }
  if (path.split('/').some((part) => part === '..')) {
    return `${JSON.stringify(path)} climbs out of the set with ".." (path traversal)`;
  }
  if (path.includes('\0')) {
    return `${JSON.stringify(path)} has a NUL byte`;
  }
  return null;
}

/** `4.12.0` when every path starts with `4.12.0/` and there is no manifest at the top. */
function commonTopFolder(paths: readonly string[]): string | null {
  if (paths.includes(SET_MANIFEST)) {
    return null;
  }
  const first = paths[0]?.split('/')[0];
  return first && paths.every((path) => path.startsWith(`${first}/`)) ? first : null;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}
