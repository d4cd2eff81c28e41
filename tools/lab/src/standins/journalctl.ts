import './stdout-pipe';
import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatEntry, journalFile, readJournal, type JournalEntry } from './systemd/journal';
import { listUnitNames, normaliseUnitName } from './systemd/unit-file';

/**
 * `journalctl` stand-in: `-u UNIT` (repeatable), `-n N`/`--lines=N`, `-f`,
 * `-o cat|short`, `--no-pager`, `-x`, `-e`, `-b`. Prints what the service
 * supervisor recorded for the unit (its output and systemd's own messages).
 */
async function main(args: readonly string[]): Promise<number> {
  const units: string[] = [];
  let lines: number | undefined;
  let follow = false;
  let output = 'short';
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    const next = () => {
      i += 1;
      return args[i] ?? '';
    };
    if (arg === '-u' || arg === '--unit') {
      units.push(normaliseUnitName(next()));
    } else if (arg.startsWith('--unit=')) {
      units.push(normaliseUnitName(arg.slice('--unit='.length)));
    } else if (arg.startsWith('-u') && arg.length > 2) {
      units.push(normaliseUnitName(arg.slice(2)));
    } else if (arg === '-n' || arg === '--lines') {
      lines = Number(next());
    } else if (arg.startsWith('--lines=')) {
      lines = Number(arg.slice('--lines='.length));
    } else if (/^-n\d+$/.test(arg)) {
      lines = Number(arg.slice(2));
    } else if (arg === '-f' || arg === '--follow') {
      follow = true;
    } else if (arg === '-o' || arg === '--output') {
      output = next();
    } else if (arg.startsWith('--output=')) {
      output = arg.slice('--output='.length);
    } else if (arg === '-e' || arg === '--pager-end') {
      lines ??= 1000;
    } else if (/^-[a-z]*u$/.test(arg)) {
      // Combined short flags ending in u (e.g. -xeu kubelet).
      if (arg.includes('e')) {
        lines ??= 1000;
      }
      units.push(normaliseUnitName(next()));
    }
  }
  const selected = units.length > 0 ? units : listUnitNames();
  const host = hostname();
  const render = (entry: JournalEntry) => (output === 'cat' ? entry.message : formatEntry(entry, host));
  const entries = selected
    .flatMap((unit) => readJournal(unit))
    .sort((a, b) => a.time.getTime() - b.time.getTime());
  const shown = lines === undefined ? entries : entries.slice(Math.max(0, entries.length - lines));
  if (shown.length === 0 && !follow) {
    process.stdout.write('-- No entries --\n');
    return 0;
  }
  for (const entry of shown) {
    process.stdout.write(`${render(entry)}\n`);
  }
  if (!follow) {
    return 0;
  }
  const seen = new Map(selected.map((unit) => [unit, readJournal(unit).length]));
  const sizes = new Map(selected.map((unit) => [unit, fileSize(journalFile(unit))]));
  for (;;) {
    await sleep(250);
    for (const unit of selected) {
      const size = fileSize(journalFile(unit));
      if (size === sizes.get(unit)) {
        continue;
      }
      sizes.set(unit, size);
      const all = readJournal(unit);
      for (const entry of all.slice(seen.get(unit) ?? 0)) {
        process.stdout.write(`${render(entry)}\n`);
      }
      seen.set(unit, all.length);
    }
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
