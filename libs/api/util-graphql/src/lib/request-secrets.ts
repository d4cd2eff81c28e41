import { AsyncLocalStorage } from 'node:async_hooks';
import { REDACTED_VALUE } from './secret-arguments';

const scope = new AsyncLocalStorage<Set<string>>();

/** Shorter values are too likely to be ordinary words of a message to be replaced there. */
const MIN_SCRUBBED_LENGTH = 4;

/**
 * Runs `work` (a request, and whatever it starts in the background) with its own set of secret
 * values: those {@link rememberRequestSecrets} is told about are then cut out of every log line
 * and error message written on its behalf.
 */
export function withRequestSecrets<T>(work: () => T): T {
  return scope.run(new Set<string>(), work);
}

/** Adds values the current request sent in `@secret` positions. Outside a request it does nothing. */
export function rememberRequestSecrets(values: Iterable<string>): void {
  const secrets = scope.getStore();
  if (!secrets) {
    return;
  }
  for (const value of values) {
    if (value.length >= MIN_SCRUBBED_LENGTH) {
      secrets.add(value);
      // As it appears inside JSON and in graphql's quoting of a value.
      secrets.add(JSON.stringify(value).slice(1, -1));
    }
  }
}

/** `text` without any secret value of the current request. */
export function scrubRequestSecrets(text: string): string {
  const secrets = scope.getStore();
  if (!secrets || secrets.size === 0) {
    return text;
  }
  let out = text;
  // Longest first, so a secret that contains another is cut out whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (out.includes(secret)) {
      out = out.split(secret).join(REDACTED_VALUE);
    }
  }
  return out;
}
