/** Where the CLI writes, so commands can be run against captured streams. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Standard output is a terminal: progress is drawn as bars, redrawn in place. */
  readonly terminal?: boolean;
}

/** One step's line of a progress display: name, a bar, its percentage and state. */
export function progressBar(label: string, state: string, percent: number | null, width = 24): string {
  const done = state === 'SUCCEEDED' ? 1 : Math.max(0, Math.min(1, (percent ?? 0) / 100));
  const filled = Math.round(done * width);
  return `${label.padEnd(18)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(done * 100)).padStart(3)}% ${state}`;
}

export type OutputFormat = 'table' | 'json' | 'yaml';

/** Columns as wide as their widest cell; CJK characters count two. */
export function table(headings: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | boolean | null | undefined>>): string {
  const cells = [headings, ...rows.map((row) => row.map((cell) => (cell == null ? '' : String(cell))))];
  const widths = headings.map((_, column) => Math.max(...cells.map((row) => displayWidth(row[column] ?? ''))));
  return cells.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : pad(cell ?? '', widths[column] ?? 0))).join('  ').trimEnd()).join('\n');
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    width += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u.test(char) ? 2 : 1;
  }
  return width;
}
