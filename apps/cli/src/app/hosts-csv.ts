/** One host of a `nodes add --from-csv` file. */
export interface CsvHost {
  readonly line: number;
  readonly hostname: string;
  readonly ip: string;
  readonly port: string | null;
  readonly user: string | null;
}

/**
 * Reads `hostname,ip,port,user` rows (a header row names the columns, in any order; port and user
 * may be missing or empty). Fields may be double-quoted; blank lines and lines starting with # are
 * skipped. Throws `{ line, message }` on a malformed file.
 */
export function parseHostsCsv(text: string): { readonly header: readonly string[]; readonly hosts: CsvHost[] } {
  const lines = text.split(/\r?\n/);
  let header: string[] | null = null;
  const hosts: CsvHost[] = [];
  lines.forEach((raw, index) => {
    if (!raw.trim() || raw.trimStart().startsWith('#')) {
      return;
    }
    const fields = splitCsvLine(raw).map((field) => field.trim());
    if (!header) {
      header = fields.map((field) => field.toLowerCase());
      return;
    }
    const value = (name: string) => {
      const at = header?.indexOf(name) ?? -1;
      return at >= 0 ? (fields[at] ?? '') : '';
    };
    hosts.push({ line: index + 1, hostname: value('hostname'), ip: value('ip'), port: value('port') || null, user: value('user') || null });
  });
  return { header: header ?? [], hosts };
}

function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        current += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        current += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === ',') {
      fields.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  fields.push(current);
  return fields;
}
