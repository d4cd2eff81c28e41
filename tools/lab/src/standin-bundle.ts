import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { HOST_COMMANDS, standinEntries } from './standin-catalogue';

const SOURCE_DIR = fileURLToPath(new URL('./standins/', import.meta.url));

/** A bundled stand-in: one self-contained Node script. */
export interface StandinBundle {
  readonly entry: string;
  readonly contents: Uint8Array;
}

let bundles: Promise<ReadonlyMap<string, Uint8Array>> | undefined;

/**
 * Bundles every stand-in entry (`src/standins/<entry>.ts`) with esbuild into
 * a CommonJS script starting with `#!/usr/bin/env node`. Built once per
 * process; nothing generated is committed.
 */
export function bundleStandins(): Promise<ReadonlyMap<string, Uint8Array>> {
  bundles ??= buildAll().catch((error: unknown) => {
    bundles = undefined;
    throw error;
  });
  return bundles;
}

/** Builds one more entry point outside the stand-in set (e.g. the lab daemon). */
export async function bundleScript(entryFile: string): Promise<Uint8Array> {
  const result = await build({
    ...commonOptions,
    entryPoints: [entryFile],
    outfile: 'out.cjs',
  });
  const file = result.outputFiles[0];
  if (file === undefined) {
    throw new Error(`esbuild produced nothing for ${entryFile}`);
  }
  return file.contents;
}

/**
 * Writes the host commands (with their aliases as symlinks) into `dir`,
 * which every host sees read-only as `/usr/local/sbin`.
 */
export async function installHostCommands(dir: string): Promise<void> {
  const built = await bundleStandins();
  await mkdir(dir, { recursive: true });
  await Promise.all(HOST_COMMANDS.map(async ({ entry, aliases }) => {
    await writeExecutable(join(dir, entry), bundleOf(built, entry));
    await Promise.all(aliases.map((alias) => symlink(entry, join(dir, alias))));
  }));
}

/** Writes `contents` as an executable file. */
export async function writeExecutable(path: string, contents: Uint8Array): Promise<void> {
  await writeFile(path, contents, { mode: 0o755 });
  await chmod(path, 0o755);
}

/** The bundle of one entry. */
export function bundleOf(built: ReadonlyMap<string, Uint8Array>, entry: string): Uint8Array {
  const contents = built.get(entry);
  if (contents === undefined) {
    throw new Error(`no stand-in bundle for ${entry}`);
  }
  return contents;
}

const commonOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  write: false,
  legalComments: 'none',
  logLevel: 'silent',
  banner: { js: '#!/usr/bin/env node' },
} as const;

async function buildAll(): Promise<ReadonlyMap<string, Uint8Array>> {
  const entries = standinEntries();
  const result = await build({
    ...commonOptions,
    entryPoints: Object.fromEntries(entries.map((entry) => [entry, join(SOURCE_DIR, `${entry}.ts`)])),
    outdir: '/standins',
  });
  const out = new Map<string, Uint8Array>();
  for (const file of result.outputFiles) {
    const entry = file.path.replace(/^.*\//, '').replace(/\.js$/, '');
    out.set(entry, file.contents);
  }
  return out;
}
