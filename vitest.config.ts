import { availableParallelism } from 'node:os';
import tsconfigPaths from 'vite-tsconfig-paths';
import { defineConfig } from 'vitest/config';
import { DurationsReporter } from './test/support/durations-reporter';

/**
 * Two kinds of tests:
 * - `unit` and `console`: `*.spec.ts` beside the code (libs, apps, tools); they may use the real
 *   Postgres on 127.0.0.1:5432 (a database of their own each) but start no external processes.
 * - `e2e`: `test/**\/*.test.ts`, cross-process tests against built artifacts, real
 *   sshd hosts in network namespaces, kube-sim, kubectl and Chromium. They share
 *   machine-wide resources (the lab's network, the CPU their timing needs), so they run one file
 *   at a time, after everything else.
 * - `e2e-beside`: the cross-process tests that hold no machine-wide resource and assert no timing
 *   (lint rules, manifests, promtool, kube-sim against kubectl and the Python client, the
 *   benchmark's smoke run, which records figures but never judges them, the secrets check): they
 *   run beside the specs, on every core, before the serial chain starts.
 *
 * Two e2e files at a time (a second lane) was measured on these 2 cores and gave nothing: each
 * file ran 2–3.5× slower beside another (two labs, two APIs and a browser are CPU-bound), so the
 * chain took as long and its timing got worse. See test/durations.txt for each file's time.
 *
 * Vitest runs projects of one `sequence.groupOrder` together, with the same number of workers,
 * and a project limited to one worker in a group of its own after them.
 */
const E2E_BESIDE = [
  'test/lint/**/*.test.ts',
  'test/deploy/**/*.test.ts',
  'test/monitoring/alert-rules.test.ts',
  'test/monitoring/certificate-alerts.test.ts',
  'test/monitoring/metric-names.test.ts',
  'test/kube-sim/**/*.test.ts',
  'test/kube/least-privilege-role.test.ts',
  'test/bench/smoke.test.ts',
  'test/api/secrets.test.ts',
];
const WORKERS_BESIDE = Math.max(2, availableParallelism());
export default defineConfig({
  plugins: [tsconfigPaths({ projects: ['tsconfig.base.json'] })],
  resolve: {
    // graphql 16 has no "exports": Node loads its CommonJS build for packages such as
    // type-graphql, while Vite would pick the ESM build for our sources. Two copies of
    // graphql cannot share a schema, so our sources get the CommonJS build too.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    reporters: ['default', new DurationsReporter()],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{apps,libs,tools}/**/src/**/*.spec.ts'],
          exclude: ['**/node_modules/**', 'apps/console/**', 'libs/console/**'],
          environment: 'node',
          maxWorkers: WORKERS_BESIDE,
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
          maxWorkers: WORKERS_BESIDE,
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e-beside',
          include: E2E_BESIDE,
          environment: 'node',
          maxWorkers: WORKERS_BESIDE,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...E2E_BESIDE],
          environment: 'node',
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
