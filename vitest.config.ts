import tsconfigPaths from 'vite-tsconfig-paths';
import { defineConfig } from 'vitest/config';

/**
 * Two kinds of tests:
 * - `unit`: `*.spec.ts` beside the code (libs, apps, tools); they may use the real
 *   Postgres on 127.0.0.1:5432 but start no external processes of their own.
 * - `e2e`: `test/**\/*.test.ts`, cross-process tests against built artifacts, real
 *   sshd hosts in network namespaces, kube-sim, kubectl and Chromium. They share
 *   machine-wide resources, so they run one file at a time.
 */
export default defineConfig({
  plugins: [tsconfigPaths({ projects: ['tsconfig.base.json'] })],
  resolve: {
    // graphql 16 has no "exports": Node loads its CommonJS build for packages such as
    // type-graphql, while Vite would pick the ESM build for our sources. Two copies of
    // graphql cannot share a schema, so our sources get the CommonJS build too.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{apps,libs,tools}/**/src/**/*.spec.ts'],
          exclude: ['**/node_modules/**', 'apps/console/**', 'libs/console/**'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          // The console's rules, stores, view models and catalogues, in Node (no DOM; the few that
          // need injection use TestBed); components are covered in Chromium by test/console.
          name: 'console',
          include: ['{apps,libs}/console/**/src/**/*.spec.ts'],
          exclude: ['**/node_modules/**'],
          environment: 'node',
          setupFiles: ['libs/console/util-i18n/src/testing/angular-test-environment.ts'],
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
