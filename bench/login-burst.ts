/**
 * What a burst of 200 sign-in attempts costs the API, and whether `admin` can still sign in
 * from elsewhere meanwhile. Each scenario gets a fresh built API process (so its peak RSS,
 * VmHWM, is the burst's) on a fresh database of the Postgres server at 127.0.0.1:5432:
 *
 * - one address: 200 wrong passwords for `admin` at once, all from 127.0.0.2;
 * - many addresses: 200 wrong passwords for 200 different user names, from 127.0.1.1–127.0.1.200;
 *
 * and in both, while the burst runs, `admin` signs in with the right password from 127.0.0.3,
 * where it signed in once before the burst, and from 127.0.0.4, where it never did. A preload (bench/support/count-scrypt.cjs) counts scrypt calls in flight inside the API.
 *
 *   npx tsx bench/login-burst.ts [bundle=dist/apps/api/main.js]
 *
 * Build first (`npx nx run api:build`); pass a copy of another build to compare. Prints figures;
 * not part of the test suite.
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { startBuiltApi } from './support/built-api';

const BUNDLE = process.argv[2] ?? 'dist/apps/api/main.js';
const ATTEMPTS = 200;
const ADMIN_PASSWORD = 'bench-admin-password';
const LOGIN = 'mutation($u:String!,$p:String!){ login(username:$u,password:$p){ token } }';

interface Answer {
  readonly ms: number;
  readonly code: string;
}

/** One sign-in over its own TCP connection from `localAddress` (any 127.x.y.z works on loopback). */
function login(url: string, localAddress: string, username: string, password: string): Promise<Answer> {
  const started = performance.now();
  const body = JSON.stringify({ query: LOGIN, variables: { u: username, p: password } });
  return new Promise((done) => {
    const call = request(`${url}/graphql`, { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        const parsed = JSON.parse(text) as { data?: { login?: { token: string } } | null; errors?: Array<{ extensions?: { code?: string } }> };
        done({ ms: performance.now() - started, code: parsed.data?.login ? 'OK' : String(parsed.errors?.[0]?.extensions?.['code'] ?? `HTTP ${response.statusCode}`) });
      });
    });
    call.on('error', (error) => done({ ms: performance.now() - started, code: `ERROR ${error.message}` }));
    call.end(body);
  });
}

async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

function tally(answers: readonly Answer[]): string {
  const counts = new Map<string, number>();
  for (const answer of answers) {
    counts.set(answer.code, (counts.get(answer.code) ?? 0) + 1);
  }
  return [...counts].map(([code, count]) => `${code} ${count}`).join(', ');
}

async function scenario(name: string, attempt: (index: number, url: string) => Promise<Answer>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-login-'));
  const database = await createTestDatabase('ccos_bench');
  const peakFile = join(dir, 'scrypt-peak.json');
  const api = await startBuiltApi(
    { DATABASE_URL: database.url, SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop', ADMIN_PASSWORD, DATA_DIR: dir, LOG_LEVEL: 'warn', SCRYPT_PEAK_FILE: peakFile },
    { bundle: BUNDLE, nodeArgs: ['--require', resolve('bench/support/count-scrypt.cjs')] },
  );
  try {
    const before = await login(api.url, '127.0.0.3', 'admin', ADMIN_PASSWORD);
    if (before.code !== 'OK') {
      throw new Error(`admin could not sign in before the burst: ${before.code}`);
    }
    const idleRss = await peakRssMiB(api.pid);
    const started = performance.now();
    const burst = Promise.all(Array.from({ length: ATTEMPTS }, (_, index) => attempt(index, api.url)));
    // The burst's requests are on their way; admin signs in from addresses of its own.
    const [admin, adminNew] = await Promise.all([login(api.url, '127.0.0.3', 'admin', ADMIN_PASSWORD), login(api.url, '127.0.0.4', 'admin', ADMIN_PASSWORD)]);
    const answers = await burst;
    const wallMs = performance.now() - started;
    const rss = await peakRssMiB(api.pid);
    await api.close();
    const { peak, calls } = JSON.parse(await readFile(peakFile, 'utf8')) as { peak: number; calls: number };
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    console.log(
      `${name}: ${ATTEMPTS} attempts answered in ${(wallMs / 1000).toFixed(2)} s (slowest ${(slowest / 1000).toFixed(2)} s) — ${tally(answers)}\n` +
        `  peak RSS ${rss.toFixed(0)} MiB (${idleRss.toFixed(0)} MiB before the burst); scrypt: ${calls} calls, at most ${peak} in flight at once\n` +
        `  admin meanwhile: from 127.0.0.3 (signed in there before) ${admin.code} after ${(admin.ms / 1000).toFixed(2)} s, ` +
        `from 127.0.0.4 (first time) ${adminNew.code} after ${(adminNew.ms / 1000).toFixed(2)} s`,
    );
  } finally {
    await api.close().catch(() => undefined);
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`bundle: ${BUNDLE}`);
  await scenario('one address, admin', (_index, url) => login(url, '127.0.0.2', 'admin', 'wrong-password'));
  await scenario('200 addresses, 200 names', (index, url) => login(url, `127.0.1.${index + 1}`, `user${index}`, 'wrong-password'));
}

await main();
