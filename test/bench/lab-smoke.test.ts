import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_LOCK_TIMEOUT_MS } from '@ccos/tools/lab';

/**
 * `npm run bench -- agent install-footprint --smoke`: the rows that run on lab hosts (root),
 * at a tiny size (2 hosts for the agent copy; 1 install beside 20 nodes and 5 subscriptions),
 * against the built API and agent. Checks that each ran and recorded positive figures beside
 * positive references, never how fast.
 */
interface Report {
  rows: Array<{ id: string; status: string; reason?: string; figures: Array<{ name: string; value: number; unit: string; reference: { name: string; value: number }; ratio: number }> }>;
}

let dir: string;
let run: { code: number; stderr: string };
let report: Report;

describe('npm run bench -- agent install-footprint --smoke', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bench-lab-smoke-'));
    run = await new Promise((resolve) => {
      execFile('npx', ['tsx', 'bench/run.ts', 'agent', 'install-footprint', '--smoke', '--out', dir], { maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } }, (error, _stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr }),
      );
    });
    report = JSON.parse(await readFile(join(dir, 'latest.json'), 'utf8')) as Report;
  }, LAB_LOCK_TIMEOUT_MS + 900_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs both rows and records their figures: the agent size, gzip size and copy time; memory and Postgres per install run', () => {
    expect(run.code, run.stderr.slice(-6000)).toBe(0);
    expect(report.rows.map((row) => [row.id, row.status, row.reason ?? ''])).toEqual([
      ['install-footprint', 'ok', ''],
      ['agent', 'ok', ''],
    ]);
    const names = report.rows.flatMap((row) => row.figures.map((figure) => figure.name));
    expect(names).toEqual(
      expect.arrayContaining([
        'agent executable size',
        'agent executable, gzip -6',
        'agent copied to 2 lab hosts at once over SSH (SFTP + SHA-256 check on the host)',
        'Postgres rows per install run (all tables)',
        'Postgres bytes per install run (pg_total_relation_size delta)',
      ]),
    );
    for (const row of report.rows) {
      for (const figure of row.figures) {
        const label = `${row.id}: ${figure.name}`;
        expect(Number.isFinite(figure.value) && figure.value > 0, label).toBe(true);
        expect(Number.isFinite(figure.reference.value) && figure.reference.value > 0, label).toBe(true);
        expect(figure.ratio, label).toBeCloseTo(figure.value / figure.reference.value, 6);
      }
    }
    const gzip = report.rows.find((row) => row.id === 'agent')?.figures.find((figure) => figure.name === 'agent executable, gzip -6');
    expect(gzip?.ratio).toBeLessThan(1);
  });
});
