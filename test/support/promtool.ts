import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';

/**
 * The real `promtool` (Debian's `prometheus` package) on the alert rules the deployment ships.
 * Rules live in PrometheusRule objects under deploy/ (what the Prometheus Operator reads); their
 * `spec` has the shape of a plain rules file, so promtool checks and unit-tests them as they are.
 */

export const PROMTOOL = '/usr/bin/promtool';
const run = promisify(execFile);

/** A rules file's content (`groups: …`) from every PrometheusRule in a YAML file (one or several documents). */
export async function rulesOfPrometheusRule(file: string): Promise<{ groups: unknown[] }> {
  const documents = parseAllDocuments(await readFile(file, 'utf8')).map((document) => document.toJS() as { kind?: string; spec?: { groups?: unknown[] } } | null);
  const groups = documents.filter((document) => document?.kind === 'PrometheusRule').flatMap((document) => document?.spec?.groups ?? []);
  if (groups.length === 0) {
    throw new Error(`${file} holds no PrometheusRule with rule groups`);
  }
  return { groups };
}

export interface PromtoolResult {
  readonly ok: boolean;
  readonly output: string;
}

/**
 * Runs `promtool check rules` on the rules and `promtool test rules` on the given unit tests
 * (promtool's own format: `tests: [{ interval, input_series, alert_rule_test }]`), in a temporary
 * folder removed afterwards. Never throws for a failing check: the test asserts on `ok` and `output`.
 */
export async function promtool(rules: { groups: unknown[] }, unitTests?: { tests: unknown[]; evaluation_interval?: string }): Promise<{ check: PromtoolResult; test?: PromtoolResult }> {
  const folder = await mkdtemp(join(tmpdir(), 'promtool-'));
  try {
    const rulesFile = join(folder, 'rules.yaml');
    await writeFile(rulesFile, stringify(rules));
    const check = await outcome(['check', 'rules', rulesFile]);
    if (!unitTests) {
      return { check };
    }
    const testFile = join(folder, 'tests.yaml');
    await writeFile(testFile, stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', ...unitTests }));
    return { check, test: await outcome(['test', 'rules', testFile], folder) };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function outcome(args: string[], cwd?: string): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd, timeout: 60_000 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` || failed.message };
  }
}
