import { availableParallelism } from 'node:os';
import tsconfigPaths from 'vite-tsconfig-paths';
import { defineConfig } from 'vitest/config';
import { DurationsReporter, DurationsSequencer } from './test/support/durations-reporter';

/**
 * Two kinds of tests:
 * - `unit` and `console`: `*.spec.ts` beside the code (libs, apps, tools); they may use the real
 *   Postgres on 127.0.0.1:5432 (a database of their own each) but start no external processes.
 * - `e2e`: `test/**\/*.test.ts`, cross-process tests against built artifacts, real
 *   sshd hosts in network namespaces, kube-sim, kubectl and Chromium. They run after everything
 *   else, three files at a time (E2E_LANES): every lab takes its own slice of the lab network
 *   under the machine-wide lab lock, every API, kube-sim and browser its own free port, so files
 *   never meet. An e2e file waits on hosts, links and timers for most of its time, so lanes fill
 *   the cores until they are busy: measured on these 2 cores (2026-12-06), two lanes left the
 *   machine half idle (test/console/nodes.test.ts beside test/install/replicas.test.ts: 150 CPU-s
 *   in 150 s), and four lanes ran the 51 files in 1,005 s with the cores 90 % busy (1,800 CPU-s:
 *   the API processes 35 %, the test workers 19 %, Chromium 11 %, agents 7 %) against 1,512 s for
 *   two lanes in the last CI run (a busier machine); but with four, waits of 15 s in the console
 *   files ran out. Three fill the cores without that.
 * - `e2e-beside`: the cross-process tests that hold no machine-wide resource and assert no timing
 *   (lint rules, manifests, promtool, kube-sim against kubectl and the Python client, the
 *   benchmark's smoke run, which records figures but never judges them, the secrets check): they
 *   run beside the specs, on every core, before the e2e files start.
 *
 * See test/durations.txt for each file's time; the files of each project are handed out slowest
 * first by those times (DurationsSequencer), so no long file starts last on a lane.
 *
 * - `e2e-alone`: files that rewrite what the others read (`npm start` rebuilds dist/), alone at the end.
 *
 * Vitest runs projects of one `sequence.groupOrder` together, with the same number of workers:
 * the specs and `e2e-beside` are group 0, the e2e lanes group 1, after them, then `e2e-alone`.
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
/**
 * Specs that keep a module registry of their own (`unit-isolated`; the other specs share their
 * worker's, see `unit`): those that build a GraphQL schema from resolvers declared in the spec
 * (type-graphql keeps every decorated class in one global store). The API's specs, which build
 * the one schema of the real resolvers, share their worker's modules like the rest: measured
 * 2026-12-06 on 2 cores, their 28 files took 248 CPU-s isolated and 160 sharing (import 78 s
 * against 17 s).
 */
const ISOLATED_SPECS = [
  'libs/api/util-graphql/src/lib/query-limits.spec.ts',
  'libs/api/util-graphql/src/lib/input-marks.spec.ts',
  'libs/api/util-graphql/src/lib/input-guard.spec.ts',
  'libs/api/util-graphql/src/lib/audit-middleware.spec.ts',
];
/**
 * Files that rewrite build outputs other files read (`npm start` has Nx write dist/ again from its
 * cache): they run alone, after the e2e lanes.
 */
const E2E_ALONE = ['test/api/npm-start.test.ts'];
const WORKERS_BESIDE = Math.max(2, availableParallelism());
const E2E_LANES = Number(process.env['E2E_LANES'] ?? 3);
/**
 * An `expect.poll` in an e2e file waits on another process (an API answer, a page redrawn from a
 * subscription): Vitest's default of one second judged a busy machine, not the product (a Pools
 * page refusal arrived later than that in a CI run with three lanes). A poll passes as soon as it
 * holds, so the longer limit costs a passing test nothing.
 */
const E2E_POLL = { timeout: 15_000, interval: 50 };
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
    sequence: { sequencer: DurationsSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{apps,libs,tools}/**/src/**/*.spec.ts'],
          exclude: ['**/node_modules/**', 'apps/console/**', 'libs/console/**', ...ISOLATED_SPECS],
          environment: 'node',
          maxWorkers: WORKERS_BESIDE,
          // The spec files of a worker share its modules instead of importing TypeORM, the
          // Kubernetes client and the features anew each (measured 2026-12-05 on 2 cores, the
          // specs of both unit projects: 273 s and 503 CPU-s all isolated, 214 s and 390 CPU-s
          // with these shared). Each spec builds what it tests (database, stores, kube-sim) itself.
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-isolated',
          include: ISOLATED_SPECS,
          environment: 'node',
          maxWorkers: WORKERS_BESIDE,
          testTimeout: 30_000,
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
          exclude: ['**/node_modules/**', ...E2E_BESIDE, ...E2E_ALONE],
          environment: 'node',
          maxWorkers: E2E_LANES,
          sequence: { groupOrder: 1 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
          expect: { poll: E2E_POLL },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e-alone',
          include: E2E_ALONE,
          environment: 'node',
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
          expect: { poll: E2E_POLL },
        },
      },
    ],
  },
});
