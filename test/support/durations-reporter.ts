import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Records how long each test file took, slowest first, so the suite's time has a place where
 * it is written down: `TEST_DURATIONS_FILE` (default `tmp/test-durations.txt`; `npm test`
 * writes the committed `test/durations.txt`). Prints the ten slowest at the end of the run.
 * A file's time is its import and its tests and hooks, as vitest's diagnostics count them.
 */
export class DurationsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((module) => {
        const diagnostic = module.diagnostic();
        const seconds = (diagnostic.collectDuration + diagnostic.setupDuration + diagnostic.duration) / 1000;
        return { seconds, project: module.project.name, file: relative(process.cwd(), module.moduleId), state: module.state() };
      })
      .sort((a, b) => b.seconds - a.seconds);
    if (rows.length === 0) {
      return;
    }
    const byProject = new Map<string, number>();
    for (const row of rows) {
      byProject.set(row.project, (byProject.get(row.project) ?? 0) + row.seconds);
    }
    const lines = [
      `# Time per test file, slowest first (seconds, import + tests + hooks), ${rows.length} files`,
      `# per project (sum): ${[...byProject].map(([project, seconds]) => `${project} ${seconds.toFixed(0)}`).join(', ')}`,
      ...rows.map((row) => `${row.seconds.toFixed(1).padStart(7)}  ${row.project.padEnd(11)} ${row.file}${row.state === 'passed' ? '' : ` (${row.state})`}`),
    ];
    const target = process.env['TEST_DURATIONS_FILE'] ?? 'tmp/test-durations.txt';
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `${lines.join('\n')}\n`);
    process.stdout.write(`\nslowest test files (all in ${target}):\n${lines.slice(2, 12).join('\n')}\n`);
  }
}
