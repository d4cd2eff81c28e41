import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REQUIRED_BINARIES } from '@ccos/shared/domain';
import { ArtifactImportError, ArtifactSetStore } from './artifact-set-store';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** A release folder as an operator copies it from the bootstrap node: files plus manifest.json. */
async function writeRelease(dir: string, version: string, tweak: (files: Map<string, Buffer>) => void = () => undefined): Promise<void> {
  const files = new Map<string, Buffer>();
  for (const name of REQUIRED_BINARIES) {
    files.set(`binary/${name}`, Buffer.from(`#!/bin/sh\necho ${name} ${version}\n`));
  }
  files.set('rpm/cri-o-1.25.0-1.x86_64.rpm', Buffer.from(`cri-o ${version}`));
  files.set('rpm/conmon-2.1.2-1.x86_64.rpm', Buffer.from(`conmon ${version}`));
  files.set('unit/kubelet.service', Buffer.from('[Service]\nExecStart=/usr/local/bin/kubelet\n'));
  const manifest = {
    version,
    artifacts: [...files].map(([path, data]) => {
      const [kind, name] = path.split('/');
      return { kind, name, size: data.length, sha256: sha256(data) };
    }),
  };
  tweak(files);
  await rm(dir, { recursive: true, force: true });
  for (const [path, data] of files) {
    await mkdir(join(dir, path.split('/')[0] ?? ''), { recursive: true });
    await writeFile(join(dir, path), data);
  }
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
}

async function refusal(work: Promise<unknown>): Promise<ArtifactImportError> {
  const error = await work.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ArtifactImportError);
  return error as ArtifactImportError;
}

describe('artifact set store', () => {
  let work: string;
  let store: ArtifactSetStore;
  let release: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ccos-sets-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await rm(join(work, 'store'), { recursive: true, force: true });
    store = new ArtifactSetStore(join(work, 'store'));
    release = join(work, 'release');
    await writeRelease(release, '4.12.0');
  });

  /** The set in use for 4.12.0: its manifest sha256 and one file's bytes. */
  async function inUse() {
    const catalog = await store.catalog('4.12.0');
    const kubelet = await catalog?.find('binary', 'kubelet');
    return { sha: (await catalog?.manifestDocument())?.sha256, kubelet: kubelet ? await readFile(kubelet.path, 'utf8') : null };
  }

  it('imports a complete folder and serves it by its version', async () => {
    const set = await store.importFolder(release);
    expect(set).toMatchObject({ version: '4.12.0', artifacts: 11 });
    const catalog = await store.catalog('4.12.0');
    const manifest = await catalog?.manifest();
    expect(manifest?.version).toBe('4.12.0');
    expect(manifest?.artifacts.map((artifact) => `${artifact.kind}/${artifact.name}`)).toContain('rpm/cri-o-1.25.0-1.x86_64.rpm');
    expect((await store.list()).map((summary) => summary.version)).toEqual(['4.12.0']);
    // No staging leftovers.
    expect((await readdir(join(work, 'store', 'sets'))).filter((entry) => entry.startsWith('.staging') || entry.startsWith('.link'))).toEqual([]);
  });

  it('imports a tar archive, also one with everything under a top folder', async () => {
    const flat = join(work, 'flat.tar');
    execFileSync('tar', ['-cf', flat, '-C', release, '.']);
    expect((await store.importTar(createReadStream(flat))).version).toBe('4.12.0');
    await writeRelease(release, '4.13.0');
    await rm(join(work, '4.13.0'), { recursive: true, force: true });
    await cp(release, join(work, '4.13.0'), { recursive: true });
    const nested = join(work, 'nested.tar');
    execFileSync('tar', ['-cf', nested, '-C', work, '4.13.0']);
    expect((await store.importTar(createReadStream(nested))).version).toBe('4.13.0');
    expect((await store.list()).map((summary) => summary.version)).toEqual(['4.12.0', '4.13.0']);
  });

  it('refuses a set with one changed byte, naming the file, and keeps the previous set in use', async () => {
    await store.importFolder(release);
    const before = await inUse();
    await writeRelease(release, '4.12.0', (files) => {
      const kubelet = Buffer.from(files.get('binary/kubelet') ?? '');
      kubelet[0] = (kubelet[0] ?? 0) ^ 1;
      files.set('binary/kubelet', kubelet);
    });
    const error = await refusal(store.importFolder(release));
    expect(error.message).toMatch(/binary\/kubelet has sha256 [0-9a-f]{64}; manifest.json says [0-9a-f]{64}/);
    expect(await inUse()).toEqual(before);
  });

  it('refuses a set missing one rpm and says which', async () => {
    await store.importFolder(release);
    const before = await inUse();
    await writeRelease(release, '4.12.0', (files) => files.delete('rpm/conmon-2.1.2-1.x86_64.rpm'));
    const error = await refusal(store.importFolder(release));
    expect(error.missing).toEqual(['rpm/conmon-2.1.2-1.x86_64.rpm']);
    expect(error.message).toContain('missing rpm/conmon-2.1.2-1.x86_64.rpm');
    expect(await inUse()).toEqual(before);
  });

  it('refuses a manifest that lacks a required binary, and files the manifest does not list', async () => {
    await writeRelease(release, '4.12.0');
    const manifest = JSON.parse(await readFile(join(release, 'manifest.json'), 'utf8')) as { artifacts: Array<{ name: string }> };
    manifest.artifacts = manifest.artifacts.filter((artifact) => artifact.name !== 'oc');
    await writeFile(join(release, 'manifest.json'), JSON.stringify(manifest));
    const error = await refusal(store.importFolder(release));
    expect(error.missing).toEqual(['binary/oc (not in manifest.json)']);
    expect(error.problems).toEqual(['binary/oc is not listed in manifest.json']);
    expect(await store.catalog('4.12.0')).toBeNull();
  });

  it('refuses path traversal in the manifest and in tar member names, leaving the previous set', async () => {
    await store.importFolder(release);
    const before = await inUse();
    const manifest = JSON.parse(await readFile(join(release, 'manifest.json'), 'utf8')) as { artifacts: Array<{ name: string; kind: string }> };
    const evil = { ...manifest, artifacts: manifest.artifacts.map((artifact) => (artifact.name === 'oc' ? { ...artifact, name: '../../../etc/cron.d/oc' } : artifact)) };
    await writeFile(join(release, 'manifest.json'), JSON.stringify(evil));
    expect((await refusal(store.importFolder(release))).message).toContain('"../../../etc/cron.d/oc" is not a plain file name');

    await writeRelease(release, '4.12.0');
    await writeFile(join(work, 'outside'), 'planted');
    const archive = join(work, 'traversal.tar');
    execFileSync('tar', ['-cPf', archive, '-C', release, 'manifest.json', 'binary', 'rpm', 'unit', '../outside']);
    const error = await refusal(store.importTar(createReadStream(archive)));
    expect(error.message).toContain('"../outside" climbs out of the set with ".." (path traversal)');
    expect(await inUse()).toEqual(before);
    expect(await readdir(join(work, 'store'))).toEqual(['sets']);
  });

  it('refuses links and damaged archives', async () => {
    const linked = join(work, 'linked');
    await rm(linked, { recursive: true, force: true });
    await cp(release, linked, { recursive: true });
    execFileSync('ln', ['-sf', '/etc/passwd', join(linked, 'binary', 'extra')]);
    const archive = join(work, 'linked.tar');
    execFileSync('tar', ['-cf', archive, '-C', linked, '.']);
    expect((await refusal(store.importTar(createReadStream(archive)))).message).toContain('./binary/extra is a link or special file');
    expect((await refusal(store.importFolder(linked))).message).toContain('binary/extra is not a regular file');
    const damaged = Buffer.from(await readFile(archive)).subarray(0, 700);
    expect((await refusal(store.importTar((async function* () { yield damaged; })()))).message).toMatch(/cut short|not a tar archive/);
  });

  /** Where the last member's data ends: the archive without its end-of-archive marker (two zero blocks) and padding. */
  function endOfLastMember(archive: Buffer): number {
    let offset = 0;
    while (offset + 512 <= archive.length && archive.subarray(offset, offset + 512).some((byte) => byte !== 0)) {
      const size = parseInt(archive.subarray(offset + 124, offset + 136).toString('latin1').replace(/\0.*$/, '').trim(), 8);
      offset += 512 + Math.ceil(size / 512) * 512;
    }
    return offset;
  }

  it('refuses an archive cut short after a whole member, though every listed file came in whole, and stores nothing of it', async () => {
    // Issue 25: a transfer that stops between two members lost whatever followed; the
    // end-of-archive marker is the only sign the whole archive arrived.
    await store.importFolder(release);
    const before = await inUse();
    await writeRelease(release, '4.13.0');
    const archive = join(work, 'cut.tar');
    execFileSync('tar', ['-cf', archive, '-C', release, 'manifest.json', 'binary', 'rpm', 'unit']);
    const whole = await readFile(archive);
    const cut = whole.subarray(0, endOfLastMember(whole));
    expect(cut.length % 512).toBe(0);
    expect(cut.length).toBeLessThan(whole.length);
    const error = await refusal(store.importTar((async function* () { yield cut; })()));
    expect(error.message).toMatch(/cut short: it ends before the end-of-archive marker/);
    expect(await inUse()).toEqual(before);
    expect((await store.list()).map((summary) => summary.version)).toEqual(['4.12.0']);
    // One zero block is half a marker: still cut short.
    const half = Buffer.concat([cut, Buffer.alloc(512)]);
    expect((await refusal(store.importTar((async function* () { yield half; })()))).message).toMatch(/end-of-archive marker/);
    // The whole archive is taken.
    expect((await store.importTar((async function* () { yield whole; })())).version).toBe('4.13.0');
  });
});
