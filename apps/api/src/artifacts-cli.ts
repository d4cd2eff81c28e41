import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ArtifactImportError, ArtifactSetStore } from '@ccos/api/feature-artifacts';

const USAGE = `usage: npm run artifacts -- <command>

  import <folder|file.tar> [--dir DIR]
      checks one release's set (manifest.json + binary/, rpm/, unit/) against its manifest
      (size, sha256, completeness) and stores it by its version; a refused set changes nothing
  import <file.tar> --url https://service:4000
      uploads the archive to a running service (POST /admin/artifact-sets) as the ADMIN whose
      session token is in CCOS_TOKEN
  list [--dir DIR]
      the imported sets

DIR is ARTIFACTS_DIR, else DATA_DIR/artifacts, else ./.data/artifacts (as the service reads them).
`;

/** `npm run artifacts -- …`: import and list release artifact sets. Returns the exit code. */
export async function runArtifactsCli(argv: readonly string[], env: NodeJS.ProcessEnv, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { dir: { type: 'string' }, url: { type: 'string' }, help: { type: 'boolean' } } });
  } catch (error) {
    err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command, source, ...extra] = parsed.positionals;
  if (parsed.values.help || !command) {
    out(USAGE);
    return parsed.values.help ? 0 : 2;
  }
  const dir = resolve(parsed.values.dir ?? env['ARTIFACTS_DIR'] ?? join(env['DATA_DIR'] ?? './.data', 'artifacts'));
  const store = new ArtifactSetStore(dir);
  if (command === 'list' && !source) {
    const sets = await store.list();
    out(sets.length === 0 ? `no artifact sets imported in ${dir}\n` : sets.map((set) => `${set.version}\t${set.artifacts} artifacts\t${(set.bytes / 1024 / 1024).toFixed(1)} MiB\timported ${set.importedAt.toISOString()}\n`).join(''));
    return 0;
  }
  if (command !== 'import' || !source || extra.length > 0) {
    err(USAGE);
    return 2;
  }
  const info = await stat(source).catch(() => null);
  if (!info) {
    err(`${source} does not exist\n`);
    return 1;
  }
  if (parsed.values.url) {
    return upload(parsed.values.url, source, info.isDirectory(), env['CCOS_TOKEN'], out, err);
  }
  try {
    const set = info.isDirectory() ? await store.importFolder(source) : await store.importTar(createReadStream(source));
    out(`imported release ${set.version}: ${set.artifacts} artifacts, ${(set.bytes / 1024 / 1024).toFixed(1)} MiB, into ${join(dir, 'sets', set.version)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ArtifactImportError) {
      err(`refused, nothing changed:\n${[...error.problems, ...error.missing.map((item) => `missing ${item}`)].map((line) => `  - ${line}\n`).join('')}`);
      return 1;
    }
    throw error;
  }
}

async function upload(url: string, source: string, isFolder: boolean, token: string | undefined, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  if (isFolder) {
    err('--url uploads a tar archive; pack the folder first (tar -cf set.tar -C <folder> .)\n');
    return 2;
  }
  if (!token) {
    err('set CCOS_TOKEN to an ADMIN session token to upload\n');
    return 2;
  }
  const size = (await stat(source)).size;
  const response = await fetch(new URL('/admin/artifact-sets', url), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-tar', 'content-length': String(size) },
    body: createReadStream(source) as unknown as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const body = (await response.json().catch(() => ({}))) as { version?: string; artifacts?: number; error?: string; problems?: string[]; missing?: string[] };
  if (response.status === 201) {
    out(`imported release ${body.version ?? '?'} (${body.artifacts ?? 0} artifacts) into ${url}\n`);
    return 0;
  }
  err(`refused (${response.status}): ${body.error ?? response.statusText}\n`);
  return 1;
}
