/**
 * What HTTPS costs an artifact download: the built API serves one file from its artifact
 * folder, and this process downloads it over plain HTTP and over TLS on the same port
 * (one connection per download, the CA pinned and no name check, as the agent does),
 * alternating, several rounds. Prints MB/s for each and the ratio. Loopback, so the
 * figure is the CPU cost of TLS (AES-GCM with AES-NI on this kind of machine), not the
 * network's.
 *
 *   npx tsx bench/agent-channel-tls.ts [sizeMiB=128] [rounds=5]
 *
 * Build the API first (`npx nx run api:build`). Uses a fresh database of the Postgres server
 * at 127.0.0.1:5432. Prints figures; not part of the test suite.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type IncomingMessage, request as plainRequest } from 'node:http';
import { request as tlsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { startBuiltApi } from './support/built-api';
import { median } from './support/drain-seed';
import { type BenchOptions, type Figure, isMain } from './support/row';

const ADMIN_PASSWORD = 'bench-admin-password';

/** Downloads `url` and returns the seconds it took and the bytes received. */
function download(url: string, token: string, ca: string | null): Promise<{ seconds: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const options = { headers: { authorization: `Bearer ${token}` }, agent: false as const };
    const handle = (res: IncomingMessage) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ seconds: (performance.now() - started) / 1000, bytes }));
      res.on('error', reject);
    };
    const req = ca === null ? plainRequest(url, options, handle) : tlsRequest(url, { ...options, ca, checkServerIdentity: () => undefined }, handle);
    req.on('error', reject);
    req.end();
  });
}

/** The row of `npm run bench`: the artifact route's HTTPS throughput beside its plain HTTP throughput on the same port. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const { plain, tls } = await measureTls(options.smoke ? 4 : 128, options.smoke ? 1 : 5, options.log);
  return [
    {
      name: 'artifact download over HTTPS (agent channel), 1 connection',
      value: tls,
      unit: 'MB/s',
      reference: { name: 'plain HTTP, same route and port', value: plain, measured: true },
      better: 'higher',
      goal: { on: 'value', atLeast: 125, text: '≥ 125 MB/s (fills 1 Gbit/s)' },
    },
  ];
}

async function measureTls(SIZE_MIB: number, ROUNDS: number, log: (line: string) => void): Promise<{ plain: number; tls: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-agent-channel-'));
  const artifacts = join(dir, 'artifacts');
  await mkdir(join(artifacts, 'binary'), { recursive: true });
  await writeFile(join(artifacts, 'binary', 'kubelet'), randomBytes(SIZE_MIB * 1024 * 1024));
  const database = await createTestDatabase('ccos_bench');
  const api = await startBuiltApi({
    DATABASE_URL: database.url, SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop', ADMIN_PASSWORD, DATA_DIR: dir, ARTIFACTS_DIR: artifacts, LOG_LEVEL: 'warn',
  });
  try {
    const gql = async <T>(query: string, variables: Record<string, unknown>, token?: string): Promise<T> => {
      const response = await fetch(`${api.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return ((await response.json()) as { data: T }).data;
    };
    const token = (await gql<{ login: { token: string } }>('mutation($p: String!) { login(username: "admin", password: $p) { token } }', { p: ADMIN_PASSWORD })).login.token;
    const ca = (await gql<{ agentChannel: { caCertificate: string } }>('{ agentChannel { caCertificate } }', {}, token)).agentChannel.caCertificate;
    const plainUrl = `${api.url}/artifacts/binary/kubelet`;
    const tlsUrl = plainUrl.replace('http://', 'https://');
    // One of each first, so the file is in the page cache and the checksum computed.
    await download(plainUrl, token, null);
    await download(tlsUrl, token, ca);
    const rates = { plain: [] as number[], tls: [] as number[] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [kind, url, pin] of [['plain', plainUrl, null], ['tls', tlsUrl, ca]] as const) {
        const { seconds, bytes } = await download(url, token, pin);
        if (bytes !== SIZE_MIB * 1024 * 1024) {
          throw new Error(`${kind}: got ${bytes} bytes`);
        }
        rates[kind].push(bytes / 1e6 / seconds);
      }
    }
    const plain = median(rates.plain);
    const tls = median(rates.tls);
    log(`artifact download, ${SIZE_MIB} MiB over loopback, ${ROUNDS} rounds (median):`);
    log(`  plain HTTP  ${plain.toFixed(0)} MB/s   (${rates.plain.map((rate) => rate.toFixed(0)).join(', ')})`);
    log(`  HTTPS       ${tls.toFixed(0)} MB/s   (${rates.tls.map((rate) => rate.toFixed(0)).join(', ')})`);
    log(`  TLS costs ${((1 - tls / plain) * 100).toFixed(0)} % of the plain rate; a 1 Gbit/s link carries 125 MB/s`);
    return { plain, tls };
  } finally {
    await api.close();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  await measureTls(Number(process.argv[2] ?? 128), Number(process.argv[3] ?? 5), (line) => console.log(line));
}
