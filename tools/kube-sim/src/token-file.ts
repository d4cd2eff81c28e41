import { readFile } from 'node:fs/promises';

/** One line of kube-apiserver's `--token-auth-file`. */
export interface StaticToken {
  token: string;
  user: string;
  uid: string;
  groups: string[];
}

function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        current += '"';
        i++;
      } else if (ch === '"') {
        quoted = false;
      } else {
        current += ch;
      }
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === ',') {
      fields.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  fields.push(current);
  return fields;
}

/**
 * Parses the static token file format: CSV `token,user,uid,"group1,group2"`, groups optional.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authentication/#static-token-file
 */
export function parseTokenFile(text: string): StaticToken[] {
  const tokens: StaticToken[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) {
      return;
    }
    const fields = parseCsvLine(line).map((f) => f.trim());
    if (fields.length < 3 || !fields[0] || !fields[1]) {
      throw new Error(`token file line ${index + 1}: expected token,user,uid[,"groups"]`);
    }
    const groups = (fields[3] ?? '').split(',').map((g) => g.trim()).filter(Boolean);
    tokens.push({ token: fields[0], user: fields[1], uid: fields[2], groups });
  });
  return tokens;
}

/** Reads and parses a static token file. */
export async function readTokenFile(path: string): Promise<StaticToken[]> {
  return parseTokenFile(await readFile(path, 'utf8'));
}
