import type { CsrChangedMessage } from './csr-watches';

/**
 * Drops a change already delivered: with several replicas each one watching a cluster
 * publishes the same change. Keyed by CSR name and resourceVersion; the memory is bounded.
 */
export async function* uniqueCsrChanges(source: AsyncIterable<CsrChangedMessage>, remember = 1000): AsyncGenerator<CsrChangedMessage> {
  const seen = new Set<string>();
  for await (const message of source) {
    const key = `${message.name}@${message.resourceVersion}`;
    if (seen.has(key)) {
      continue;
    }
    seen.add(key);
    if (seen.size > remember) {
      seen.delete(seen.values().next().value as string);
    }
    yield message;
  }
}
