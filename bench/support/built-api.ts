import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
// The tests' port picker (test support, not product code): below the ephemeral range, so side-by-side runs cannot take it first.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { freePort } from '../../test/support/api-process';

const API_BUNDLE = 'dist/apps/api/main.js';

export interface BuiltApi {
  readonly url: string;
  readonly pid: number;
  close(): Promise<void>;
}

export interface BuiltApiOptions {
  /** Another build of the API (e.g. a copy of main's, to compare against). */
  readonly bundle?: string;
  /** Node options before the bundle, e.g. `--require` of a measuring preload. */
  readonly nodeArgs?: readonly string[];
}

/** The built API (`npx nx run api:build`) in a process of its own, as `npm start` runs it. */
export async function startBuiltApi(env: Record<string, string>, options: BuiltApiOptions = {}): Promise<BuiltApi> {
  const bundle = options.bundle ?? API_BUNDLE;
  if (!existsSync(bundle)) {
    throw new Error(`${bundle} is missing: build it first (npx nx run api:build)`);
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // API_CPU_PROF=<folder>, as for the tests' API processes: a V8 CPU profile there when the API exits.
  const profile = process.env['API_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['API_CPU_PROF']}`] : [];
  const child = spawn(process.execPath, [...profile, ...(options.nodeArgs ?? []), bundle], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (child.exitCode !== null) {
      throw new Error(`the API exited with ${child.exitCode}: ${stderr}`);
    }
    if (Date.now() - started > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`the API was not ready within 60 s: ${stderr}`);
    }
    if (await fetch(`${url}/readyz`).then((response) => response.ok, () => false)) {
      break;
    }
  }
  return {
    url,
    pid: child.pid ?? 0,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
