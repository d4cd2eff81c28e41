/**
 * Runs one row module in a process of its own, for bench/run.ts: a row that crashes, leaks a
 * timer or a socket cannot take the others with it.
 *
 *   npx tsx bench/run-row.ts <module> <out.json> [--smoke]
 *
 * Writes `{ figures }`, or `{ unavailable }` when the module is absent or a prerequisite is
 * missing; exits 1 (the row crashed) on any other error.
 */
import { writeFileSync } from 'node:fs';
import { type BenchOptions, type Figure, RowUnavailable } from './support/row';

const [moduleFile, outFile] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const smoke = process.argv.includes('--smoke');
if (!moduleFile || !outFile) {
  console.error('usage: tsx bench/run-row.ts <module> <out.json> [--smoke]');
  process.exit(2);
}
const moduleUrl = new URL(moduleFile, import.meta.url).href;

type RowModule = { benchRows?: (options: BenchOptions) => Promise<Figure[]> };
let loaded: RowModule;
try {
  loaded = (await import(moduleUrl)) as RowModule;
} catch (error) {
  const code = (error as { code?: string }).code;
  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(moduleFile)) {
    writeFileSync(outFile, JSON.stringify({ unavailable: `bench/${moduleFile} is not in this tree` }));
    process.exit(0);
  }
  throw error;
}
if (typeof loaded.benchRows !== 'function') {
  writeFileSync(outFile, JSON.stringify({ unavailable: `bench/${moduleFile} exports no benchRows(options)` }));
  process.exit(0);
}
try {
  const figures = await loaded.benchRows({ smoke, log: (line) => process.stderr.write(`${line}\n`) });
  writeFileSync(outFile, JSON.stringify({ figures }));
} catch (error) {
  if (error instanceof RowUnavailable) {
    writeFileSync(outFile, JSON.stringify({ unavailable: error.message }));
  } else {
    throw error;
  }
}
// Rows start servers and clients; whatever they left open must not keep this process alive.
process.exit(0);
