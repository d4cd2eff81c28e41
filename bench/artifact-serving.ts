/**
 * Artifact serving: concurrent downloads of one large artifact from the built API's
 * `/artifacts` route (plain HTTP, an agent's token), beside the same file served by nginx
 * (Debian's package, started here on a temporary configuration on a loopback port, with
 * Debian's defaults that matter: `worker_processes auto`, `sendfile on`). Then a resumed
 * download (`Range: bytes=<half>-`) from each, as after a cut halfway. Three rounds, the two
 * servers taking turns; each figure is the median of its three (a single round swung from 0.7× to
 * 1.3× between runs on a shared VM).
 *
 *   npx tsx bench/artifact-serving.ts [sizeMiB=512] [concurrent=8]
 *
 * Clients and servers share this machine's cores; both servers get the same clients. Needs
 * /usr/sbin/nginx (the row reports "nginx missing" otherwise) and the built API.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
// The tests' port picker (test support, not product code): below the ephemeral range, so side-by-side runs cannot take it first.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { freePort } from '../test/support/api-process';
import { startApiWorld } from './support/api-world';
import { type BenchOptions, type Figure, RowUnavailable, isMain, percentile } from './support/row';

const NGINX = '/usr/sbin/nginx';

/** The row of `npm run bench`. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const size = options.smoke ? { mib: 8, concurrent: 2, rounds: 1 } : { mib: 512, concurrent: 8, rounds: 3 };
  const result = await measureArtifacts(size.mib, size.concurrent, options.log, size.rounds);
  return [
    {
      name: `${size.concurrent} concurrent downloads of a ${size.mib} MiB artifact`,
      value: result.api,
      unit: 'MB/s',
      reference: { name: 'nginx, same file and clients', value: result.nginx, measured: true },
      better: 'higher',
      goal: { on: 'ratio', atLeast: 0.9, text: '≥ 0.9 × nginx' },
    },
    {
      name: `resumed download (Range: second half of ${size.mib} MiB)`,
      value: result.apiResume,
      unit: 'MB/s',
      reference: { name: 'nginx, same range', value: result.nginxResume, measured: true },
      better: 'higher',
      goal: { on: 'ratio', atLeast: 0.9, text: '≥ 0.9 × nginx' },
    },
  ];
}

/** One GET; the bytes received and the status. */
function download(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `concurrent` downloads at once; MB/s over all of them. */
async function throughput(url: string, headers: Record<string, string>, concurrent: number, expectBytes: number, expectStatus: number): Promise<number> {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: concurrent }, () => download(url, headers)));
  const seconds = (performance.now() - started) / 1000;
  for (const answer of answers) {
    if (answer.status !== expectStatus || answer.bytes !== expectBytes) {
      throw new Error(`${url}: ${answer.status}, ${answer.bytes} bytes (expected ${expectStatus}, ${expectBytes})`);
    }
  }
  return (concurrent * expectBytes) / 1e6 / seconds;
}

async function startNginx(dir: string, root: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  // Everything nginx writes stays in `dir`; the root user's workers run as root so they can read the temporary folder.
  await writeFile(
    conf,
    [
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes auto;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      '  sendfile on;',
      '  tcp_nopush on;',
      `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
      `  server { listen 127.0.0.1:${port}; root ${root}; location / { } }`,
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (child.exitCode !== null) {
      throw new Error(`nginx exited with ${child.exitCode}: ${stderr}`);
    }
    if (Date.now() - started > 10_000) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not answer within 10 s: ${stderr}`);
    }
    if (await download(`${url}/`, {}).then(() => true, () => false)) {
      break;
    }
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function measureArtifacts(
  sizeMiB: number,
  concurrent: number,
  log: (line: string) => void,
  rounds = 3,
): Promise<{ api: number; nginx: number; apiResume: number; nginxResume: number }> {
  if (!existsSync(NGINX)) {
    throw new RowUnavailable('nginx missing (apt-get install nginx)');
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-artifacts-'));
  const artifacts = join(dir, 'artifacts');
  await mkdir(join(artifacts, 'binary'), { recursive: true });
  const file = join(artifacts, 'binary', 'kubelet');
  const handle = await open(file, 'w');
  for (let written = 0; written < sizeMiB; written += 16) {
    await handle.write(randomBytes(Math.min(16, sizeMiB - written) * 1024 * 1024));
  }
  await handle.close();
  const bytes = sizeMiB * 1024 * 1024;
  await chmod(dir, 0o755);
  const world = await startApiWorld({ ARTIFACTS_DIR: artifacts });
  let nginx: { url: string; stop: () => Promise<void> } | undefined;
  try {
    await mkdir(join(dir, 'nginx'));
    nginx = await startNginx(join(dir, 'nginx'), artifacts);
    const auth = { authorization: `Bearer ${world.token}` };
    const apiUrl = `${world.api.url}/artifacts/binary/kubelet`;
    const nginxUrl = `${nginx.url}/binary/kubelet`;
    // One of each first: the file in the page cache, the API's checksum computed.
    await throughput(apiUrl, auth, 1, bytes, 200);
    await throughput(nginxUrl, {}, 1, bytes, 200);
    const half = Math.floor(bytes / 2);
    const range = { range: `bytes=${half}-` };
    const samples = { api: [] as number[], nginx: [] as number[], apiResume: [] as number[], nginxResume: [] as number[] };
    for (let round = 1; round <= rounds; round++) {
      samples.api.push(await throughput(apiUrl, auth, concurrent, bytes, 200));
      samples.nginx.push(await throughput(nginxUrl, {}, concurrent, bytes, 200));
      samples.apiResume.push(await throughput(apiUrl, { ...auth, ...range }, 1, bytes - half, 206));
      samples.nginxResume.push(await throughput(nginxUrl, range, 1, bytes - half, 206));
      log(`round ${round}: ${concurrent} × ${sizeMiB} MiB: API ${samples.api.at(-1)?.toFixed(0)} MB/s, nginx ${samples.nginx.at(-1)?.toFixed(0)} MB/s; resumed second half: API ${samples.apiResume.at(-1)?.toFixed(0)} MB/s, nginx ${samples.nginxResume.at(-1)?.toFixed(0)} MB/s`);
    }
    const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
    return { api: median(samples.api), nginx: median(samples.nginx), apiResume: median(samples.apiResume), nginxResume: median(samples.nginxResume) };
  } finally {
    await nginx?.stop();
    await world.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  await measureArtifacts(Number(process.argv[2] ?? 512), Number(process.argv[3] ?? 8), (line) => console.log(line));
}
