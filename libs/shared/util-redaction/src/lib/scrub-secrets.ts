/** What a removed credential is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Names of keys (JSON, YAML, `key=value`) whose values are credentials: `token`, `password`,
 * `client-key-data`, `apiKey`, `passphrase`, … also as the end of a longer name (`bootstrapToken`,
 * `db_password`). Bounded so that a long run of word characters cannot make matching quadratic.
 */
const SECRET_KEY = String.raw`[\w.-]{0,40}?(?:token|password|passwd|secret|secret[_-]?key|passphrase|private[_-]?key|key-data|api[_-]?key|authorization|credentials?)`;
const SECRET_KEY_NAME = new RegExp(`^${SECRET_KEY}$`, 'i');

interface Rule {
  readonly pattern: RegExp;
  readonly replace: (match: string, ...groups: string[]) => string;
}

/**
 * The rules, most specific first. Every pattern is linear in the text: quantifiers that could
 * overlap are bounded, so an attacker's answer cannot make scrubbing slow.
 */
const RULES: readonly Rule[] = [
  // PEM private keys (PKCS#1, PKCS#8, EC, OpenSSH, encrypted), also cut off before their END line.
  {
    pattern: /-----BEGIN ((?:[A-Z0-9]{1,20} ){0,4})PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g,
    replace: (_match, kind) => `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}-----END ${kind}PRIVATE KEY-----`,
  },
  // PuTTY private keys.
  { pattern: /Private-Lines: ?\d{1,4}[\s\S]*?(?=Private-MAC|$)/g, replace: () => `Private-Lines: ${REDACTED}\n` },
  // Base64 of a PEM block (kubeconfig client-key-data, Secret data): dropped when it holds a private key.
  { pattern: /LS0tLS1CRUdJTi[A-Za-z0-9+/=]*/g, replace: (match) => (base64Text(match).includes('PRIVATE KEY') ? REDACTED : match) },
  // File contents embedded as data: URLs (Ignition files, kubeconfigs in a config): never shown.
  { pattern: /\bdata:([\w.+/-]{0,100}(?:;[\w.+=-]{0,100}){0,5}),[^\s"'\\)<>]*/gi, replace: (_match, type) => `data:${type},${REDACTED}` },
  // JSON Web Tokens (service account tokens), also cut short.
  { pattern: /\beyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*){0,2}/g, replace: () => REDACTED },
  // Kubernetes bootstrap tokens `abcdef.0123456789abcdef`, also after a %-escape (`%20abcdef.…`).
  { pattern: /(?<=^|[^a-z0-9]|%[0-9A-Fa-f]{2})[a-z0-9]{6}\.[a-z0-9]{16}(?![a-z0-9])/g, replace: () => REDACTED },
  // Authorization header values (a word after "Bearer" in prose has no digit or symbol, and stays).
  {
    pattern: /\b(Bearer|Basic)(\s+|%20)(?=[A-Za-z0-9._~+/=-]{0,4095}[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,4096}/gi,
    replace: (_match, scheme, space) => `${scheme}${space}${REDACTED}`,
  },
  // Passwords in URLs: scheme://user:password@host.
  { pattern: /\b([a-z][a-z0-9+.-]{0,20}:\/\/[^/\s:@"'\\]{1,256}:)[^@\s/"'\\]{1,256}@/gi, replace: (_match, prefix) => `${prefix}${REDACTED}@` },
  // `token: x`, `"password":"x"`, `\"token\":\"x\"` (JSON inside a string), `api_key=x`.
  {
    pattern: new RegExp(String.raw`((?:\\?["'])?\b${SECRET_KEY}(?:\\?["'])?\s{0,8}[:=]\s{0,8})(\\?["']?)(?!\[redacted\]|(?:Bearer|Basic)\s)([^"'\s,;&}\]\\]{1,8192})`, 'gi'),
    replace: (_match, prefix, quote) => `${prefix}${quote}${REDACTED}`,
  },
];

/**
 * Removes credentials from text that came from somewhere else — an HTTP answer, a cluster's
 * error, command output, a log line: private keys (also base64-encoded), JWTs, bootstrap tokens,
 * Authorization values, passwords in URLs and values of keys named like credentials, and the
 * contents of data: URLs. Certificates themselves are public and stay.
 */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, rule.replace as (match: string, ...rest: unknown[]) => string);
  }
  return out;
}

/**
 * {@link scrubSecrets} for every string of a JSON-like value, and the whole value of any key named
 * like a credential. Returns a copy; other values are kept as they are.
 */
export function scrubSecretsDeep<T>(value: T): T {
  return scrubValue(value, 0) as T;
}

/** Whether a key of a JSON object or a YAML map names a credential (`token`, `clientKeyData`, …). */
export function isSecretKeyName(key: string): boolean {
  return SECRET_KEY_NAME.test(key);
}

const MAX_DEPTH = 64;

function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') {
    return scrubSecrets(value);
  }
  if (depth >= MAX_DEPTH || value === null || typeof value !== 'object') {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => scrubValue(item, depth + 1));
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, inner]) => [
      key,
      isSecretKeyName(key) && typeof inner === 'string' && inner !== '' ? REDACTED : scrubValue(inner, depth + 1),
    ]),
  );
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The Latin-1 text of the first 256 bytes of some base64 (enough to see a PEM header). */
function base64Text(encoded: string): string {
  let bits = 0;
  let buffer = 0;
  let out = '';
  for (const char of encoded.slice(0, 344)) {
    const index = BASE64.indexOf(char);
    if (index < 0) {
      break;
    }
    buffer = (buffer << 6) | index;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((buffer >> bits) & 0xff);
    }
  }
  return out;
}
