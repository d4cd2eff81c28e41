#!/usr/bin/env node
// Builds the GraphQL IDE served at GET /graphql: GraphiQL, React and Monaco's workers bundled
// into dist/apps/graphiql, so the page loads nothing from anywhere but the service.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { build } from 'esbuild';

const outdir = 'dist/apps/graphiql';
const started = Date.now();
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
const common = {
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  legalComments: 'linked',
  logLevel: 'warning',
  tsconfig: 'apps/graphiql/tsconfig.json',
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file', '.svg': 'file' },
};
await Promise.all([
  build({ ...common, entryPoints: { graphiql: 'apps/graphiql/src/main.tsx' }, outdir, format: 'esm', jsx: 'automatic' }),
  // Monaco starts these with new Worker(url) (src/workers.ts); classic scripts, one file each.
  build({
    ...common,
    entryPoints: {
      'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
      'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
      'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
    },
    outdir,
    format: 'iife',
  }),
]);
await copyFile('apps/graphiql/src/index.html', `${outdir}/index.html`);
console.log(`built the GraphQL IDE into ${outdir} in ${Date.now() - started} ms`);
