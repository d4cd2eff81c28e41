/**
 * The artifact manifest: the one contract between the installer service (which serves it at
 * `GET /artifacts/manifest` and takes it with every imported release set) and the agent (which
 * downloads and checks against it). One home, so both sides read the same rules.
 */
export const ARTIFACT_KINDS = ['binary', 'rpm', 'unit'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** One entry of the manifest. */
export interface Artifact {
  readonly name: string;
  readonly kind: ArtifactKind;
  readonly size: number;
  /** Lower-case hex. */
  readonly sha256: string;
  readonly version: string;
}

export interface ArtifactManifest {
  readonly version: string;
  readonly artifacts: readonly Artifact[];
}

/** The release binaries a worker needs (the seed design's DOWNLOAD_BINARIES list). */
export const REQUIRED_BINARIES = [
  'oc', 'hyperkube', 'kubelet', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'ignition', 'coreos-installer',
] as const;

/** The systemd units an install cannot do without (kubelet is started by START_KUBELET). */
export const REQUIRED_UNITS = ['kubelet.service'] as const;

/**
 * A name becomes a file name on the host (`/usr/local/bin/<name>`) and in the service's
 * store, so it must be one plain path component: no `/`, no leading dot, no `..`, nothing a
 * shell or systemd would read specially.
 */
const SAFE_NAME = /^[A-Za-z0-9_+@:-][A-Za-z0-9._+@:-]{0,254}$/;

export function isSafeArtifactName(name: string): boolean {
  return SAFE_NAME.test(name) && !name.includes('..');
}

/** A release version names a folder of the store: the same rule as artifact names, shorter. */
export function isSafeReleaseVersion(version: string): boolean {
  return version.length <= 100 && isSafeArtifactName(version);
}

/**
 * What a set lacks before it can install a worker: `binary/<name>` for each required binary,
 * `unit/<name>` for each required unit, and `rpm/*` (the release's rpm set) when it has no rpm at
 * all. Empty = complete. Only paths: they are shown as they are in every language.
 */
export function missingArtifacts(artifacts: ReadonlyArray<Pick<Artifact, 'kind' | 'name'>>): string[] {
  const has = (kind: ArtifactKind, name: string) => artifacts.some((artifact) => artifact.kind === kind && artifact.name === name);
  return [
    ...REQUIRED_BINARIES.filter((name) => !has('binary', name)).map((name) => `binary/${name}`),
    ...REQUIRED_UNITS.filter((name) => !has('unit', name)).map((name) => `unit/${name}`),
    ...(artifacts.some((artifact) => artifact.kind === 'rpm') ? [] : ['rpm/*']),
  ];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses and checks the manifest; throws naming every problem. */
export function parseManifest(value: unknown): ArtifactManifest {
  if (!isObject(value) || !Array.isArray(value['artifacts'])) {
    throw new Error('the artifact manifest is not an object with an `artifacts` array');
  }
  const problems: string[] = [];
  const artifacts: Artifact[] = [];
  const seen = new Set<string>();
  value['artifacts'].forEach((entry: unknown, index) => {
    const where = `artifacts[${index}]`;
    if (!isObject(entry)) {
      problems.push(`${where} is not an object`);
      return;
    }
    const { name, kind, size, sha256, version } = entry;
    if (typeof name !== 'string' || !isSafeArtifactName(name)) {
      problems.push(`${where}.name ${JSON.stringify(name)} is not a plain file name`);
      return;
    }
    if (typeof kind !== 'string' || !(ARTIFACT_KINDS as readonly string[]).includes(kind)) {
      problems.push(`${where} (${name}).kind ${JSON.stringify(kind)} is not one of ${ARTIFACT_KINDS.join(', ')}`);
      return;
    }
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      problems.push(`${where} (${name}).size is not a byte count`);
      return;
    }
    if (typeof sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha256)) {
      problems.push(`${where} (${name}).sha256 is not 64 hex digits`);
      return;
    }
    const key = `${kind}/${name}`;
    if (seen.has(key)) {
      problems.push(`${where}: ${key} appears twice`);
      return;
    }
    seen.add(key);
    artifacts.push({ name, kind: kind as ArtifactKind, size, sha256: sha256.toLowerCase(), version: typeof version === 'string' ? version : '' });
  });
  if (problems.length > 0) {
    throw new Error(`the artifact manifest is invalid: ${problems.join('; ')}`);
  }
  return { version: typeof value['version'] === 'string' ? value['version'] : '', artifacts };
}
