import pino, { type DestinationStream, type Logger } from 'pino';
import { scrubRequestSecrets } from '@ccos/api/util-graphql';
import { scrubSecretsDeep } from '@ccos/shared/util-redaction';

/**
 * Credentials that are not GraphQL arguments (those carry `@secret` in the schema and are cut out
 * of every line by value, see {@link scrubLogLine}): request headers and raw GraphQL variables.
 */
export const REDACTED_PATHS = ['authorization', '*.authorization', 'req.headers.authorization', 'req.headers.cookie', 'variables', '*.variables', 'secretKey', '*.secretKey'];

/** JSON logs; pretty only when a person is watching a terminal. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'ccos-scaler-api' },
    serializers: { err: serializeError },
    hooks: { streamWrite: scrubLogLine },
  };
  if (destination) {
    return pino(options, destination);
  }
  if (process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}

/**
 * The last step of every log line: the values the current request sent in `@secret` arguments,
 * and whatever looks like a credential (tokens, private keys, passwords in URLs, data: URLs), are
 * replaced by `[redacted]` inside its strings. A line that is not JSON is scrubbed as text.
 */
export function scrubLogLine(line: string): string {
  try {
    const parsed: unknown = JSON.parse(line);
    return `${JSON.stringify(mapStrings(scrubSecretsDeep(parsed), scrubRequestSecrets))}\n`;
  } catch {
    return scrubRequestSecrets(line);
  }
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') {
    return map(value);
  }
  if (Array.isArray(value)) {
    return value.map((item) => mapStrings(item, map));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, mapStrings(inner, map)]));
  }
  return value;
}

/** Keys of database errors (TypeORM's QueryFailedError, pg's DatabaseError) that quote stored or sent values. */
const SQL_VALUE_KEYS = ['parameters', 'detail', 'where'];

/**
 * pino's error serializer, minus SQL values: TypeORM puts a failed query's parameters (a user's
 * input, a password hash, sealed credentials) on its errors, Postgres quotes row values in
 * `detail` ("Failing row contains …") and a refused value at the end of its message
 * (`invalid input syntax for type uuid: "…"`). The query text has placeholders only and stays.
 */
export function serializeError(error: unknown): unknown {
  return withoutSqlValues(pino.stdSerializers.err(error as Error), 0);
}

/** Postgres ends some messages with the value it refused, in double quotes. */
const QUOTED_VALUE = /: "[^\n]*"$/;

function withoutSqlValues(value: unknown, depth: number): unknown {
  if (!value || typeof value !== 'object' || depth > 8) {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => withoutSqlValues(item, depth + 1));
  }
  const record = value as Record<string, unknown>;
  const fromDatabase = 'query' in record || 'parameters' in record || 'driverError' in record || 'severity' in record;
  const message = typeof record['message'] === 'string' ? record['message'] : null;
  const unquoted = fromDatabase && message ? message.replace(QUOTED_VALUE, ': "[redacted]"') : message;
  return Object.fromEntries(
    Object.entries(record)
      .filter(([key]) => key !== 'parameters' && !(fromDatabase && SQL_VALUE_KEYS.includes(key)))
      .map(([key, inner]) => {
        if (fromDatabase && message && unquoted !== message && (key === 'message' || key === 'stack') && typeof inner === 'string') {
          return [key, inner.split(message).join(unquoted ?? '')];
        }
        return [key, withoutSqlValues(inner, depth + 1)];
      }),
  );
}
