import { isJsonObject } from '@ccos/agent/util-host';

export const ARTIFACT_KINDS = ['binary', 'rpm', 'unit'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** One entry of `GET /artifacts/manifest`. */
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

/**
 * A name becomes a file name on the host (`/usr/local/bin/<name>`), so it
 * must be one plain path component: no `/`, no leading dot, nothing a
 * shell or systemd would read specially.
 */
const SAFE_NAME = /^[A-Za-z0-9_+@:-][A-Za-z0-9._+@:-]{0,254}$/;

/** Parses and checks the manifest; throws naming every problem. */
export function parseManifest(value: unknown): ArtifactManifest {
  if (!isJsonObject(value) || !Array.isArray(value['artifacts'])) {
    throw new Error('the artifact manifest is not an object with an `artifacts` array');
  }
  const problems: string[] = [];
  const artifacts: Artifact[] = [];
  const seen = new Set<string>();
  value['artifacts'].forEach((entry, index) => {
    const where = `artifacts[${index}]`;
    if (!isJsonObject(entry)) {
      problems.push(`${where} is not an object`);
      return;
    }
    const { name, kind, size, sha256, version } = entry;
    if (typeof name !== 'string' || !SAFE_NAME.test(name) || name.includes('..')) {
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
