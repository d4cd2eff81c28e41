#!/usr/bin/env node
// Bundles one entry point with esbuild, resolving the workspace's tsconfig path aliases.
//   node tools/build/bundle.mjs <entry.ts> <out.js> [--format=esm|cjs] [--self-contained] [--define:KEY=VALUE]...
// Without --self-contained, npm packages stay external and load from node_modules at run time.
import { build } from 'esbuild';

const [entry, outfile, ...flags] = process.argv.slice(2);
if (!entry || !outfile) {
  console.error('usage: bundle.mjs <entry.ts> <out.js> [--format=esm|cjs] [--self-contained] [--define:KEY=VALUE]');
  process.exit(2);
}
const format = flags.find((flag) => flag.startsWith('--format='))?.slice('--format='.length) ?? 'esm';
const selfContained = flags.includes('--self-contained');
const define = Object.fromEntries(
  flags.filter((flag) => flag.startsWith('--define:')).map((flag) => flag.slice('--define:'.length).split('=', 2)),
);

const started = Date.now();
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format,
  // Class names become GraphQL type names: never minify them away.
  keepNames: true,
  sourcemap: true,
  tsconfig: 'tsconfig.base.json',
  packages: selfContained ? undefined : 'external',
  define,
  alias: selfContained ? { 'supports-color': './tools/build/empty-module.cjs' } : undefined,
  // ESM bundles of CommonJS-era code still call require() for Node built-ins.
  banner: format === 'esm' ? { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" } : undefined,
  logLevel: 'warning',
});
console.log(`bundled ${entry} -> ${outfile} in ${Date.now() - started} ms`);
