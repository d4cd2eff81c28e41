import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run bench -- --smoke --skip-lab`: every row that needs no lab hosts, at a tiny size, in
 * processes of their own, against the built API and console (`npx nx run-many -t build -p api
 * console`), Postgres, kube-sim, kubectl, nginx and Chromium. Checks that each ran and what it
 * recorded, not how fast: figures are for the table, never assertions.
 */
interface Report {
  machine: { cpuModel: string; cpuCount: number; memoryBytes: number; node: string; loadAverageAtStart: number[] };
  commit: string;
  date: string;
  smoke: boolean;
  rows: Array<{ id: string; status: string; reason?: string; loadAverageBefore?: number; loadAverage?: number; figures: Array<{ name: string; value: number; unit: string; reference: { name: string; value: number; measured: boolean }; ratio: number; verdict: string }> }>;
}

// Rows on lab hosts (root, network namespaces): their smoke is test/bench/lab-smoke.test.ts (scale-out has its own tests).
const LAB_ROWS = ['scale-out', 'install-footprint', 'agent'];
let dir: string;
let run: { code: number; stdout: string; stderr: string };
let report: Report;

describe('npm run bench -- --smoke', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bench-smoke-'));
    run = await new Promise((resolve) => {
      execFile('npx', ['tsx', 'bench/run.ts', '--smoke', '--skip-lab', '--out', dir], { maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
    report = JSON.parse(await readFile(join(dir, 'latest.json'), 'utf8')) as Report;
  }, 900_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs every row without a crash and exits 0', () => {
    const crashed = report.rows.filter((row) => row.status === 'crashed').map((row) => row.id);
    expect(crashed, run.stderr.slice(-6000)).toEqual([]);
    expect(run.code).toBe(0);
  });

  it('records the machine, the commit and the date', () => {
    expect(report.smoke).toBe(true);
    expect(report.machine.cpuCount).toBeGreaterThan(0);
    expect(report.machine.cpuModel.length).toBeGreaterThan(0);
    expect(report.machine.memoryBytes).toBeGreaterThan(0);
    expect(report.machine.node).toBe(process.version);
    // How busy the machine was, so figures from a loaded machine are read as ratios only.
    expect(report.machine.loadAverageAtStart).toHaveLength(3);
    expect(report.machine.loadAverageAtStart.every((load) => load >= 0)).toBe(true);
    expect(report.rows.every((row) => typeof row.loadAverage === 'number' && row.loadAverage >= 0)).toBe(true);
    expect(report.rows.every((row) => typeof row.loadAverageBefore === 'number' && row.loadAverageBefore >= 0)).toBe(true);
    expect(report.commit).toMatch(/^[0-9a-f]{40}(\+uncommitted)?$/);
    expect(Date.now() - Date.parse(report.date)).toBeLessThan(3_600_000);
  });

  it('has figures for each row that needs no lab host: positive numbers beside a positive reference, with their ratio', () => {
    const ids = report.rows.map((row) => row.id);
    for (const id of ['fleet', 'ingestion', 'event-bus', 'csr', 'drain', 'removal', 'artifacts', 'agent-channel', 'memory', 'console', 'graphql-validation']) {
      expect(ids).toContain(id);
    }
    expect(ids.filter((id) => LAB_ROWS.includes(id))).toEqual([]);
    for (const row of report.rows) {
      expect(row.status, `${row.id}: ${row.reason ?? ''}`).toBe('ok');
      expect(row.figures.length, row.id).toBeGreaterThan(0);
      for (const figure of row.figures) {
        const label = `${row.id}: ${figure.name}`;
        expect(Number.isFinite(figure.value) && figure.value > 0, label).toBe(true);
        expect(Number.isFinite(figure.reference.value) && figure.reference.value > 0, label).toBe(true);
        expect(figure.ratio, label).toBeCloseTo(figure.value / figure.reference.value, 6);
        expect(['met', 'missed', 'no goal'], label).toContain(figure.verdict);
        expect(figure.unit.length, label).toBeGreaterThan(0);
      }
    }
  });

  it('prints one table and writes the same rows as Markdown', async () => {
    expect(run.stdout).toMatch(/^row\s+figure\s+ours\s+reference\s+ratio\s+goal\s+verdict/m);
    const markdown = await readFile(join(dir, 'latest.md'), 'utf8');
    for (const row of report.rows) {
      for (const figure of row.figures) {
        expect(run.stdout).toContain(figure.name);
        expect(markdown).toContain(figure.name);
      }
    }
  });
});

describe('npm run bench -- <row>', () => {
  it('refuses an unknown row, naming the rows there are', async () => {
    const answer = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile('npx', ['tsx', 'bench/run.ts', 'no-such-row', '--out', tmpdir()], (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr })),
    );
    expect(answer.code).toBe(2);
    expect(answer.stderr).toContain('unknown row(s): no-such-row');
    expect(answer.stderr).toContain('ingestion');
  }, 60_000);
});

describe('a row module that is not in the tree', () => {
  it('is recorded as not available, not as a crash', async () => {
    const out = join(await mkdtemp(join(tmpdir(), 'bench-row-')), 'row.json');
    const code = await new Promise<number>((resolve) => execFile('npx', ['tsx', 'bench/run-row.ts', 'no-such-row.ts', out], (error) => resolve(error ? Number(error.code) : 0)));
    expect(code).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual({ unavailable: 'bench/no-such-row.ts is not in this tree' });
    await rm(join(out, '..'), { recursive: true, force: true });
  }, 60_000);
});
