import { createCipheriv, createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { kubeletUnit, nodeInitUnit } from './kubelet-files';
import { RPM_CATALOGUE } from './rpm-catalogue';
import { bundleOf, bundleStandins, writeExecutable } from './standin-bundle';
import { ARTIFACT_BINARIES, artifactEntry } from './standin-catalogue';
import { encodeRpm, rpmFileName } from './standins/rpm/rpm-package';

/**
 * The artifacts the installer service serves, laid out exactly as
 * `DIR/<kind>/<name>` with kind binary|rpm|unit, plus `DIR/VERSION` and `DIR/manifest.json`:
 * the eight release binaries (stand-ins, ~11 MiB; kubelet really joins), the 73
 * stand-in rpms (~34 MiB, openshift-hyperkube alone 8 MiB) and the units.
 * Contents are deterministic, so checksums are stable across runs.
 */
export const ARTIFACTS_VERSION = '4.12.0-lab.1';

/** Extra MiB of the release binaries that are large in a real release (the real ones are 100+ MiB). */
const BINARY_BALLAST_MIB: Partial<Record<(typeof ARTIFACT_BINARIES)[number], number>> = { hyperkube: 6, oc: 4 };

/** One written artifact. */
export interface ArtifactFile {
  readonly kind: 'binary' | 'rpm' | 'unit';
  readonly name: string;
  readonly size: number;
}

/** (Re)writes the artifacts folder. */
export async function writeArtifacts(dir: string): Promise<ArtifactFile[]> {
  await rm(dir, { recursive: true, force: true });
  for (const kind of ['binary', 'rpm', 'unit']) {
    await mkdir(join(dir, kind), { recursive: true });
  }
  const built = await bundleStandins();
  const files: ArtifactFile[] = [];
  for (const name of ARTIFACT_BINARIES) {
    const bundle = Buffer.from(bundleOf(built, artifactEntry(name)));
    // A line naming the binary keeps the release stand-ins' checksums distinct; a comment
    // line of ballast gives the big release binaries a size downloads can be cut in the middle of.
    const ballast = BINARY_BALLAST_MIB[name] ?? 0;
    const contents = Buffer.concat([
      bundle,
      Buffer.from(`// ${name} ${ARTIFACTS_VERSION}\n`),
      ballast > 0 ? Buffer.from(`// ${payload(`binary:${name}`, (ballast * 1024 * 1024 * 3) / 4).toString('base64')}\n`) : Buffer.alloc(0),
    ]);
    await writeExecutable(join(dir, 'binary', name), contents);
    files.push({ kind: 'binary', name, size: contents.length });
  }
  await Promise.all(RPM_CATALOGUE.map(async (rpm) => {
    const contents = encodeRpm(
      { name: rpm.name, version: rpm.version, release: rpm.release, arch: rpm.arch, summary: `${rpm.name} (ccos lab stand-in)`, requires: rpm.requires },
      payload(rpm.name, rpm.sizeKiB * 1024),
    );
    const name = rpmFileName(rpm);
    await writeFile(join(dir, 'rpm', name), contents);
    files.push({ kind: 'rpm', name, size: contents.length });
  }));
  for (const [name, text] of [['kubelet.service', kubeletUnit()], ['ccos-node-init.service', nodeInitUnit()]] as const) {
    await writeFile(join(dir, 'unit', name), text);
    files.push({ kind: 'unit', name, size: Buffer.byteLength(text) });
  }
  await writeFile(join(dir, 'VERSION'), `${ARTIFACTS_VERSION}\n`);
  const sorted = files.sort((a, b) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`));
  // What a release ships beside its files (the bootstrap node's install-time server has it too):
  // the folder imports as one set with `npm run artifacts -- import DIR`.
  const manifest = {
    version: ARTIFACTS_VERSION,
    artifacts: await Promise.all(sorted.map(async (file) => ({
      kind: file.kind,
      name: file.name,
      size: file.size,
      sha256: createHash('sha256').update(await readFile(join(dir, file.kind, file.name))).digest('hex'),
    }))),
  };
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return sorted;
}

/** Deterministic incompressible bytes (an AES-CTR keystream keyed by the name). */
function payload(name: string, size: number): Buffer {
  const key = createHash('sha256').update(`ccos-lab-rpm:${name}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return Buffer.concat([cipher.update(Buffer.alloc(size)), cipher.final()]);
}
