/**
 * `npm run bench`: every row of bench/rows.ts, each in a process of its own, then one table of
 * figures beside their references (printed, and written as JSON and Markdown).
 *
 *   npm run bench                      every row at full size → bench/results/latest.{json,md}
 *   npm run bench -- <row> [<row>…]    only those rows        → tmp/bench/partial.{json,md}
 *   npm run bench -- --smoke           every row at a tiny size → tmp/bench/smoke.{json,md}
 *   options: --skip-lab (leave out rows that need lab hosts), --out <dir>
 *
 * Figures never fail the run: a missed goal is a verdict in the table. The exit code is 1 only
 * when a row crashed; a row whose prerequisite is absent is "not available".
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROWS, type RowEntry } from './rows';
import { type Figure, formatRatio, formatValue } from './support/row';

/** One figure as recorded: the row's, with its ratio and verdict. */
export interface RecordedFigure extends Figure {
  readonly ratio: number;
  readonly verdict: 'met' | 'missed' | 'no goal';
}

export interface RowResult {
  readonly id: string;
  readonly title: string;
  readonly status: 'ok' | 'not available' | 'crashed';
  readonly reason?: string;
  readonly seconds: number;
  /** The machine's 1-minute load average when the row started: how busy other work kept it. */
  readonly loadAverageBefore?: number;
  /** The machine's 1-minute load average when the row ended: how busy it was (other work included). */
  readonly loadAverage?: number;
  readonly figures: RecordedFigure[];
}

export interface BenchReport {
  readonly machine: {
    readonly cpuModel: string;
    readonly cpuCount: number;
    readonly memoryBytes: number;
    readonly freeMemoryBytes: number;
    readonly node: string;
    readonly platform: string;
    /** 1, 5 and 15-minute load averages before the first row: a busy machine reads its figures as ratios only. */
    readonly loadAverageAtStart: readonly number[];
  };
  readonly commit: string;
  readonly date: string;
  readonly smoke: boolean;
  readonly rows: RowResult[];
}

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const outIndex = args.indexOf('--out');
const outDir = outIndex >= 0 ? args[outIndex + 1] : undefined;
const wanted = args.filter((arg, index) => !arg.startsWith('--') && !(outIndex >= 0 && index === outIndex + 1));
const smoke = flag('--smoke');
const skipLab = flag('--skip-lab');

const unknown = wanted.filter((id) => !ROWS.some((row) => row.id === id));
if (unknown.length > 0) {
  console.error(`unknown row(s): ${unknown.join(', ')}; the rows are: ${ROWS.map((row) => row.id).join(', ')}`);
  process.exit(2);
}
const selected = ROWS.filter((row) => (wanted.length === 0 || wanted.includes(row.id)) && !(skipLab && row.needsLab));
const full = wanted.length === 0 && !smoke && !skipLab;
const target = outDir ?? (full ? 'bench/results' : 'tmp/bench');
const base = full || outDir ? 'latest' : smoke ? 'smoke' : 'partial';

function verdict(figure: Figure, ratio: number): RecordedFigure['verdict'] {
  if (!figure.goal) {
    return 'no goal';
  }
  const subject = figure.goal.on === 'ratio' ? ratio : figure.value;
  const ok = (figure.goal.atLeast === undefined || subject >= figure.goal.atLeast) && (figure.goal.atMost === undefined || subject <= figure.goal.atMost);
  return ok ? 'met' : 'missed';
}

async function runRow(row: RowEntry, scratch: string): Promise<RowResult> {
  const out = join(scratch, `${row.id}.json`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join('bench', 'run-row.ts'), row.module, out, ...(smoke ? ['--smoke'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Progress goes to stderr, prefixed, so stdout carries only the table.
  const relay = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      process.stderr.write(`  [${row.id}] ${line}\n`);
    }
  };
  child.stdout.on('data', relay);
  child.stderr.on('data', relay);
  const code = await new Promise<number>((resolve) => child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
  const seconds = (performance.now() - started) / 1000;
  const base = { id: row.id, title: row.title, seconds };
  if (code !== 0) {
    return { ...base, status: 'crashed', reason: `exit code ${code} (its output is above)`, figures: [] };
  }
  let answer: { figures?: Figure[]; unavailable?: string };
  try {
    answer = JSON.parse(readFileSync(out, 'utf8')) as typeof answer;
  } catch {
    return { ...base, status: 'crashed', reason: 'it wrote no result', figures: [] };
  }
  if (answer.unavailable !== undefined) {
    return { ...base, status: 'not available', reason: answer.unavailable, figures: [] };
  }
  const figures = (answer.figures ?? []).map((figure) => {
    const ratio = figure.value / figure.reference.value;
    return { ...figure, ratio, verdict: verdict(figure, ratio) };
  });
  return { ...base, status: 'ok', figures };
}

function commit(): string {
  try {
    const hash = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${hash}+uncommitted` : hash;
  } catch {
    return 'unknown';
  }
}

/** The table as rows of cells: row, figure, ours, reference, ratio, goal, verdict. */
function cells(report: BenchReport): string[][] {
  const lines: string[][] = [];
  for (const row of report.rows) {
    if (row.status !== 'ok') {
      lines.push([row.id, row.title, row.status, row.reason ?? '', '', '', '']);
      continue;
    }
    for (const figure of row.figures) {
      const reference = `${formatValue(figure.reference.value)} ${figure.unit} (${figure.reference.name}${figure.reference.measured ? '' : ', computed'})`;
      lines.push([
        row.id,
        figure.name,
        `${formatValue(figure.value)} ${figure.unit}`,
        reference,
        `${formatRatio(figure.ratio)}× (${figure.better} is better)`,
        figure.goal?.text ?? '—',
        figure.verdict === 'no goal' ? '—' : figure.verdict,
      ]);
    }
  }
  return lines;
}

const HEADER = ['row', 'figure', 'ours', 'reference', 'ratio', 'goal', 'verdict'];

function textTable(lines: string[][]): string {
  const all = [HEADER, ...lines];
  const widths = HEADER.map((_, column) => Math.max(...all.map((line) => (line[column] ?? '').length)));
  const render = (line: string[]) => line.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return [render(HEADER), widths.map((width) => '-'.repeat(width)).join('  '), ...lines.map(render)].join('\n');
}

function markdown(report: BenchReport, lines: string[][]): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  const m = report.machine;
  return [
    `# Benchmarks${report.smoke ? ' (smoke run: tiny sizes, not figures to quote)' : ''}`,
    '',
    `${report.date}, commit \`${report.commit}\`; ${m.cpuCount} × ${m.cpuModel}, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB memory, Node ${m.node} (${m.platform}); load average ${m.loadAverageAtStart.map((load) => load.toFixed(2)).join(' / ')} (1 / 5 / 15 min) before the first row.`,
    'Each figure sits beside a reference measured in the same run (or computed, where marked). See bench/README.md for what each row measures.',
    '',
    `| ${HEADER.join(' | ')} |`,
    `| ${HEADER.map(() => '---').join(' | ')} |`,
    ...lines.map((line) => `| ${line.map(escape).join(' | ')} |`),
    '',
    ...report.rows.map((row) => `- ${row.id}: ${row.status}${row.reason ? ` (${row.reason})` : ''}, ${row.seconds.toFixed(0)} s${row.loadAverage === undefined ? '' : `, load ${row.loadAverageBefore === undefined ? '' : `${row.loadAverageBefore.toFixed(2)} before it, `}${row.loadAverage.toFixed(2)} at its end`}`),
    '',
  ].join('\n');
}

const scratch = mkdtempSync(join(tmpdir(), 'ccos-bench-'));
const startedAt = new Date();
const loadAverageAtStart = loadavg();
// Taken before the rows run: what was measured, whatever changes in the tree meanwhile.
const measuredCommit = commit();
const results: RowResult[] = [];
try {
  for (const row of selected) {
    process.stderr.write(`${row.id}: ${row.title}${smoke ? ' (smoke)' : ''}\n`);
    const loadAverageBefore = loadavg()[0];
    const result = { ...(await runRow(row, scratch)), loadAverageBefore, loadAverage: loadavg()[0] };
    process.stderr.write(`${row.id}: ${result.status}${result.reason ? ` (${result.reason})` : ''} in ${result.seconds.toFixed(0)} s\n`);
    results.push(result);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const report: BenchReport = {
  machine: {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus().length,
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverageAtStart,
  },
  commit: measuredCommit,
  date: startedAt.toISOString(),
  smoke,
  rows: results,
};
const lines = cells(report);
console.log(textTable(lines));
mkdirSync(target, { recursive: true });
writeFileSync(join(target, `${base}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(target, `${base}.md`), markdown(report, lines));
console.log(`\nwritten: ${join(target, `${base}.json`)}, ${join(target, `${base}.md`)}`);
process.exit(results.some((row) => row.status === 'crashed') ? 1 : 0);
