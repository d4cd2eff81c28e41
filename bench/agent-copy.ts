/**
 * The agent as it travels: the executable's size beside the Node binary it carries (a Node
 * single executable application is node + the bundle), its gzip -6 size beside the raw size,
 * and the time to copy it to 20 lab hosts at once over SSH the way the service does
 * (data-access-ssh `uploadFile`: SFTP to a temporary name, SHA-256 on the host, rename), beside
 * OpenSSH's own `scp` of the same file to the same hosts at once. Each side copies to a path of
 * its own, alternately, for a few rounds; the median is the figure. The copies are deleted after
 * each round, so every round writes the whole file.
 *
 *   npx tsx bench/agent-copy.ts [hosts=20] [rounds=2]
 *
 * Needs root (lab hosts) and the built agent (`npx nx run boot-worker:build`). Both sides
 * authenticate with the lab's key; the service side is this process (ssh2 in Node, as in the
 * API), scp is one process per host.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { openSshSession, uploadFile } from '@ccos/api/data-access-ssh';
import { type Lab, type LabHost, startLab } from '@ccos/tools/lab';
import { median } from './support/drain-seed';
import { type BenchOptions, type Figure, RowUnavailable, isMain } from './support/row';

const AGENT_EXECUTABLE = resolve('dist/apps/boot-worker/boot-worker');
const REMOTE_DIR = '/opt/ccos-bench';
const OURS_PATH = `${REMOTE_DIR}/agent-upload`;
const SCP_PATH = `${REMOTE_DIR}/agent-scp`;

export interface AgentFigures {
  readonly hosts: number;
  readonly bytes: number;
  readonly nodeBytes: number;
  readonly gzipBytes: number;
  readonly uploadMs: number;
  readonly scpMs: number;
}

/** The row of `npm run bench`. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const [hosts, rounds] = options.smoke ? [2, 1] : [20, 2];
  const result = await measureAgent(hosts, rounds, options.log);
  const mb = (bytes: number) => bytes / 1e6;
  return [
    {
      name: 'agent executable size',
      value: mb(result.bytes),
      unit: 'MB',
      reference: { name: `the Node binary it carries (${process.version})`, value: mb(result.nodeBytes), measured: true },
      better: 'lower',
    },
    {
      name: 'agent executable, gzip -6',
      value: mb(result.gzipBytes),
      unit: 'MB',
      reference: { name: 'the executable uncompressed', value: mb(result.bytes), measured: true },
      better: 'lower',
    },
    {
      name: `agent copied to ${hosts} lab hosts at once over SSH (SFTP + SHA-256 check on the host)`,
      value: result.uploadMs / 1000,
      unit: 's',
      reference: { name: 'OpenSSH scp of the same file to the same hosts at once', value: result.scpMs / 1000, measured: true },
      better: 'lower',
      note: `${((mb(result.bytes) * hosts) / (result.uploadMs / 1000)).toFixed(0)} MB/s in all (scp ${((mb(result.bytes) * hosts) / (result.scpMs / 1000)).toFixed(0)} MB/s)`,
    },
  ];
}

async function gzipSize(path: string): Promise<number> {
  let bytes = 0;
  await pipeline(
    createReadStream(path),
    createGzip({ level: 6 }),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done();
      },
    }),
  );
  return bytes;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

function run(file: string, args: readonly string[]): Promise<void> {
  return new Promise((done, fail) => {
    execFile(file, args, { maxBuffer: 1024 * 1024 }, (error, _stdout, stderr) => (error ? fail(new Error(`${file} ${args.join(' ')}: ${String(stderr).slice(0, 500) || error.message}`)) : done()));
  });
}

/** The service's copy: one SSH session per host, all at once, each uploading and verifying. */
async function uploadToAll(hosts: readonly LabHost[], privateKey: string, sha256: string): Promise<number> {
  const started = performance.now();
  await Promise.all(
    hosts.map(async (host) => {
      const session = await openSshSession({ host: host.ip, port: host.port, username: host.user, auth: { kind: 'privateKey', privateKey } });
      try {
        await uploadFile(session, { source: AGENT_EXECUTABLE, remotePath: OURS_PATH, mode: 0o755, sha256 });
      } finally {
        await session.close();
      }
    }),
  );
  return performance.now() - started;
}

/** The reference: one scp process per host, all at once. */
async function scpToAll(hosts: readonly LabHost[], keyPath: string): Promise<number> {
  const started = performance.now();
  await Promise.all(
    hosts.map((host) =>
      run('scp', ['-q', '-B', '-i', keyPath, '-P', String(host.port), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', AGENT_EXECUTABLE, `${host.user}@${host.ip}:${SCP_PATH}`]),
    ),
  );
  return performance.now() - started;
}

async function removeCopies(lab: Lab, hosts: readonly LabHost[]): Promise<void> {
  await Promise.all(hosts.map((host) => lab.exec(host.id, ['rm', '-f', OURS_PATH, SCP_PATH])));
}

export async function measureAgent(hostCount: number, rounds: number, log: (line: string) => void): Promise<AgentFigures> {
  const bytes = await stat(AGENT_EXECUTABLE).then(
    (found) => found.size,
    () => {
      throw new RowUnavailable(`${AGENT_EXECUTABLE} is missing: npx nx run boot-worker:build`);
    },
  );
  if (process.getuid?.() !== 0) {
    throw new RowUnavailable('lab hosts need root');
  }
  const nodeBytes = (await stat(process.execPath)).size;
  const gzipBytes = await gzipSize(AGENT_EXECUTABLE);
  const sha256 = await sha256Of(AGENT_EXECUTABLE);
  log(`agent ${(bytes / 1e6).toFixed(1)} MB (gzip -6 ${(gzipBytes / 1e6).toFixed(1)} MB); node ${(nodeBytes / 1e6).toFixed(1)} MB`);
  const lab = await startLab({ hosts: hostCount, artifacts: false, name: 'bench/agent-copy' });
  try {
    const hosts = lab.hosts.slice(0, hostCount);
    const privateKey = await readFile(lab.privateKeyPath, 'utf8');
    await Promise.all(hosts.map((host) => lab.exec(host.id, ['mkdir', '-p', REMOTE_DIR])));
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate who goes first, so neither always meets a warm or a cold page cache.
      const order = round % 2 === 0 ? ['ours', 'scp'] : ['scp', 'ours'];
      for (const side of order) {
        if (side === 'ours') {
          ours.push(await uploadToAll(hosts, privateKey, sha256));
        } else {
          theirs.push(await scpToAll(hosts, lab.privateKeyPath));
        }
        await removeCopies(lab, hosts);
      }
      log(`round ${round + 1}: uploadFile to ${hostCount} hosts ${(ours.at(-1) ?? 0).toFixed(0)} ms, scp ${(theirs.at(-1) ?? 0).toFixed(0)} ms`);
    }
    return { hosts: hostCount, bytes, nodeBytes, gzipBytes, uploadMs: median(ours), scpMs: median(theirs) };
  } finally {
    await lab.stop();
  }
}

if (isMain(import.meta.url)) {
  const result = await measureAgent(Number(process.argv[2] ?? 20), Number(process.argv[3] ?? 2), (line) => console.log(line));
  console.log(JSON.stringify(result));
  process.exit(0);
}
