#!/usr/bin/env node
// Builds boot-worker as a Node single executable application (SEA):
//   1. bundle apps/boot-worker/src/main.ts into ONE CommonJS file (inside a Node 20 SEA,
//      require() loads built-ins only, so nothing may stay external);
//   2. node --experimental-sea-config → a preparation blob;
//   3. copy this node binary, strip it, inject the blob with postject;
//   4. write boot-worker.sha256 (sha256sum format) and print size and build time.
// Output: dist/apps/boot-worker/boot-worker (+ .sha256). Runs on any glibc x86_64 Linux with
// nothing else installed. Usage: node apps/boot-worker/scripts/package-sea.mjs [--no-strip]
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const outDir = join(root, 'dist/apps/boot-worker');
const work = join(outDir, 'sea');
const bundle = join(work, 'boot-worker.cjs');
const blob = join(work, 'boot-worker.blob');
const exe = join(outDir, 'boot-worker');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const started = Date.now();
const step = (label, since) => console.log(`  ${label.padEnd(10)} ${((Date.now() - since) / 1000).toFixed(1)} s`);
const run = (command, args) => execFileSync(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });

const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short=10', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  // Not a git checkout: the version says so.
}
const fullVersion = `${version}+${commit}`;

rmSync(outDir, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

let t = Date.now();
run(process.execPath, [
  'tools/build/bundle.mjs', 'apps/boot-worker/src/main.ts', bundle, '--format=cjs', '--self-contained',
  `--define:__BOOT_WORKER_VERSION__=${JSON.stringify(fullVersion)}`,
  `--define:__BOOT_WORKER_COMMIT__=${JSON.stringify(commit)}`,
]);
step('bundle', t);

t = Date.now();
writeFileSync(join(work, 'sea-config.json'), JSON.stringify({
  main: bundle,
  output: blob,
  disableExperimentalSEAWarning: true,
  useSnapshot: false,
  useCodeCache: true,
}, null, 2));
execFileSync(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], { cwd: root, stdio: 'ignore' });
step('blob', t);

t = Date.now();
copyFileSync(process.execPath, exe);
chmodSync(exe, 0o755);
if (!process.argv.includes('--no-strip')) {
  try {
    execFileSync('strip', [exe], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    console.warn(`  strip not available or failed (${error.code ?? error.message}); the executable stays unstripped`);
  }
}
step('copy+strip', t);

t = Date.now();
const injected = spawnSync(join(root, 'node_modules/.bin/postject'), [exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE], { cwd: root, encoding: 'utf8' });
// postject warns about .note sections of the stripped binary on Linux; harmless, so not shown.
const warnings = `${injected.stdout}${injected.stderr}`.split('\n').map((line) => line.replace(/\x1b\[[0-9;]*m/g, '')).filter((line) => line.trim() !== '' && !/Can't find string offset for section name '\.note/.test(line) && !/^Start injection|Injection done/.test(line));
if (injected.status !== 0) {
  throw new Error(`postject failed (${injected.status}):\n${warnings.join('\n')}`);
}
for (const line of warnings) {
  console.warn(`  postject: ${line}`);
}
step('inject', t);

const sha = createHash('sha256').update(readFileSync(exe)).digest('hex');
writeFileSync(`${exe}.sha256`, `${sha}  boot-worker\n`);
const check = execFileSync(exe, ['version'], { encoding: 'utf8', env: {} }).trim();
if (check !== `boot-worker ${fullVersion}`) {
  throw new Error(`the built executable says "${check}", expected "boot-worker ${fullVersion}"`);
}
rmSync(work, { recursive: true, force: true });
const size = statSync(exe).size;
console.log(`boot-worker ${fullVersion}: ${exe} ${(size / 1024 / 1024).toFixed(1)} MiB, sha256 ${sha}, built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
