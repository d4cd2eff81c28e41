import { type BulkHostRow, type RowDefaults, canonicalIp, checkBulkRows, parseHostList } from '@ccos/shared/domain';

/** What the CLI needs to know of a node the cluster already has. */
export interface KnownNode {
  readonly id: string;
  readonly hostname: string;
  readonly ip: string | null;
  readonly status: string;
  readonly origin: string;
}

/** A row of the file that names a host the cluster already has, at the same address. */
export interface SkippedRow {
  readonly row: BulkHostRow;
  readonly node: KnownNode;
}

/** What `nodes add --from-csv` does with a file, decided before any change is asked for. */
export interface CsvPlan {
  /** Rows the file names (header, blank and comment lines are not rows). */
  readonly rows: readonly BulkHostRow[];
  readonly skipped: readonly SkippedRow[];
  /**
   * The text for addNodes' `list`: the file with each skipped row's line turned into a comment,
   * so the rows the API checks and reports keep the line numbers they have in the file.
   */
  readonly list: string;
  /** How many rows `list` still holds. */
  readonly remaining: number;
}

/**
 * Reads a host file with the domain's host-list parser (the one the console and the API use:
 * CSV with an optional header in any column order, or whitespace-separated lines) and sets
 * aside the rows the cluster already has under the same name and address, so running a file
 * again adds only what is missing. A row is set aside only when it has no problem of its own
 * (a duplicate within the file stays, so the API names both lines). Nodes removed, and nodes
 * discovered in the cluster rather than added here (the API lets a row take their place), are
 * not "already added". Every other check is the API's, on every remaining row at once.
 */
export function planCsvAdd(text: string, nodes: readonly KnownNode[], defaults: RowDefaults): CsvPlan {
  const parsed = parseHostList(text, defaults);
  const own = checkBulkRows(parsed, { hostnames: new Set(), ips: new Set() });
  const added = nodes.filter((node) => node.status !== 'REMOVED' && node.origin !== 'DISCOVERED');
  const skipped: SkippedRow[] = [];
  for (const { row, problems } of own) {
    const node = problems.length === 0 ? added.find((known) => known.hostname === row.hostname && known.ip !== null && canonicalIp(known.ip) === canonicalIp(row.ip)) : undefined;
    if (node) {
      skipped.push({ row, node });
    }
  }
  const skippedLines = new Set(skipped.map(({ row }) => row.line));
  const list = text
    .split(/\r\n|\n|\r/)
    .map((line, index) => (skippedLines.has(index + 1) ? `# already added: ${line}` : line))
    .join('\n');
  return { rows: parsed.map(({ row }) => row), skipped, list, remaining: parsed.length - skipped.length };
}
