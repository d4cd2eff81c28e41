import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { BaseSequencer, type Reporter, type TestModule, type TestSpecification } from 'vitest/node';

/**
 * Records how long each test file took, slowest first, so the suite's time has a place where
 * it is written down: `TEST_DURATIONS_FILE` (default `tmp/test-durations.txt`; `npm test`
 * writes the committed `test/durations.txt`). Prints the ten slowest at the end of the run.
 * A file's time is its import and its tests and hooks, as vitest's diagnostics count them; beside
 * it, when the file was handed to a worker and when it ended (seconds since the run began), and
 * each project's span, so that idle lanes and a long tail show.
 */
export class DurationsReporter implements Reporter {
  private runStarted = Date.now();
  private readonly queuedAt = new Map<string, number>();
  private readonly endedAt = new Map<string, number>();

  onTestRunStart(): void {
    this.runStarted = Date.now();
  }

  onTestModuleQueued(module: TestModule): void {
    this.queuedAt.set(module.id, (Date.now() - this.runStarted) / 1000);
  }

  onTestModuleEnd(module: TestModule): void {
    this.endedAt.set(module.id, (Date.now() - this.runStarted) / 1000);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const wall = (Date.now() - this.runStarted) / 1000;
    const rows = testModules
      .map((module) => {
        const diagnostic = module.diagnostic();
        const seconds = (diagnostic.collectDuration + diagnostic.setupDuration + diagnostic.duration) / 1000;
        const from = this.queuedAt.get(module.id) ?? 0;
        const to = this.endedAt.get(module.id) ?? wall;
        return { seconds, from, to, project: module.project.name, file: relative(process.cwd(), module.moduleId), state: module.state() };
      })
      .sort((a, b) => b.seconds - a.seconds);
    if (rows.length === 0) {
      return;
    }
    const byProject = new Map<string, { sum: number; from: number; to: number }>();
    for (const row of rows) {
      const project = byProject.get(row.project) ?? { sum: 0, from: row.from, to: row.to };
      byProject.set(row.project, { sum: project.sum + row.seconds, from: Math.min(project.from, row.from), to: Math.max(project.to, row.to) });
    }
    const lines = [
      `# Time per test file, slowest first (seconds, import + tests + hooks), ${rows.length} files, ${wall.toFixed(0)} s in all`,
      `# per project (sum of files; span from the first file handed out to the last ended): ${[...byProject]
        .map(([project, { sum, from, to }]) => `${project} ${sum.toFixed(0)} (${from.toFixed(0)}–${to.toFixed(0)} s)`)
        .join(', ')}`,
      '#   time   from     to  project     file',
      ...rows.map((row) => `${row.seconds.toFixed(1).padStart(7)} ${row.from.toFixed(0).padStart(6)} ${row.to.toFixed(0).padStart(6)}  ${row.project.padEnd(11)} ${row.file}${row.state === 'passed' ? '' : ` (${row.state})`}`),
    ];
    const target = process.env['TEST_DURATIONS_FILE'] ?? 'tmp/test-durations.txt';
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `${lines.join('\n')}\n`);
    process.stdout.write(`\nslowest test files (all in ${target}):\n${lines.slice(3, 13).join('\n')}\n`);
  }
}

/** The committed record {@link DurationsReporter} writes on `npm test`, read back to order the next run. */
const RECORDED_DURATIONS = 'test/durations.txt';

/** Seconds per `project:file` in a durations file; empty when there is none. */
export function readRecordedDurations(path = RECORDED_DURATIONS): ReadonlyMap<string, number> {
  const seconds = new Map<string, number>();
  if (!existsSync(path)) {
    return seconds;
  }
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^\s*(\d+(?:\.\d+)?)\s+\d+\s+\d+\s+(\S+)\s+(\S+)/.exec(line);
    if (match) {
      seconds.set(`${match[2]}:${match[3]}`, Number(match[1]));
    }
  }
  return seconds;
}

/**
 * Hands the files of each project out slowest first, by the times recorded in test/durations.txt
 * (files it does not know yet go first). Vitest's own order needs its cache of earlier runs, which a
 * fresh clone does not have; it then goes by file size, and a long e2e file handed out last kept
 * one lane busy while the others stood idle. Groups and projects keep vitest's order.
 */
export class DurationsSequencer extends BaseSequencer {
  private readonly recorded = readRecordedDurations();

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) => this.recorded.get(`${file.project.name}:${relative(process.cwd(), file.moduleId)}`) ?? Number.POSITIVE_INFINITY;
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        (a.project.name === b.project.name ? 0 : a.project.name < b.project.name ? -1 : 1) ||
        seconds(b) - seconds(a) ||
        (a.moduleId < b.moduleId ? -1 : 1),
    );
  }
}
