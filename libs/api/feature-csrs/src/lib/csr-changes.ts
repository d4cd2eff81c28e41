import type { CsrEvent } from '@ccos/api/data-access-kube';
import { type CsrChangedPayload, type EventBus, TOPICS } from '@ccos/api/util-graphql';

/** A CSR_CHANGED payload with the resourceVersion, so subscribers can drop the same change heard twice. */
export interface CsrChangedMessage extends CsrChangedPayload {
  readonly resourceVersion: string;
}

/** Publishes a CSR change a cluster's watch heard on `CSR_CHANGED`, for csrChanged subscribers on any replica. */
export function publishCsrChange(events: EventBus, clusterId: string, event: CsrEvent): void {
  const message: CsrChangedMessage = { clusterId, name: event.csr.name, kind: event.type, resourceVersion: event.csr.resourceVersion };
  events.publish(TOPICS.CSR_CHANGED, clusterId, message);
}

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
