import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { STANDIN_FILES, statePath } from '../host-state';

/**
 * The journal stand-in: one append-only text file per unit, one entry per
 * line (`ISO time \t identifier \t pid \t message`), written by the service
 * supervisor and read by `journalctl` and `systemctl status`.
 */
export interface JournalEntry {
  readonly time: Date;
  readonly identifier: string;
  readonly pid: number;
  readonly message: string;
}

/** The journal file of a unit on this host. */
export function journalFile(unit: string): string {
  return statePath(STANDIN_FILES.journal, `${unit}.log`);
}

/** Appends entries (one per line of `message`) to a unit's journal. */
export function appendJournal(unit: string, identifier: string, pid: number, message: string): void {
  mkdirSync(statePath(STANDIN_FILES.journal), { recursive: true });
  const time = new Date().toISOString();
  const lines = message.replace(/\n$/, '').split('\n').map((line) => `${time}\t${identifier}\t${pid}\t${line}\n`);
  appendFileSync(journalFile(unit), lines.join(''));
}

/** Parses journal text (as read from {@link journalFile}). */
export function parseJournal(text: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const line of text.split('\n')) {
    const [time, identifier, pid, ...message] = line.split('\t');
    if (time === undefined || identifier === undefined || pid === undefined || message.length === 0) {
      continue;
    }
    entries.push({ time: new Date(time), identifier, pid: Number(pid), message: message.join('\t') });
  }
  return entries;
}

/** A unit's journal entries, oldest first. */
export function readJournal(unit: string): JournalEntry[] {
  try {
    return parseJournal(readFileSync(journalFile(unit), 'utf8'));
  } catch {
    return [];
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Nov 30 04:31:00 h1 kubelet[1234]: message` (journalctl's short format, UTC). */
export function formatEntry(entry: JournalEntry, hostname: string): string {
  const t = entry.time;
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp = `${MONTHS[t.getUTCMonth()]} ${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
  return `${stamp} ${hostname} ${entry.identifier}[${entry.pid}]: ${entry.message}`;
}
