import type { RemovalPreviewQuery, RemovalRunsQuery } from '@ccos/shared/api-schema';

/** What a removal would do now (the RemovalPreview query). */
export type RemovalPreviewView = RemovalPreviewQuery['removalPreview'];

/** A removal run with its options and blocking pods, without events (the RemovalRunFields fragment). */
export type RemovalRunView = Omit<RemovalRunsQuery['removalRuns'][number], 'events'>;

/** One thing a removal run did or saw (the RemovalEventFields fragment). */
export type RemovalEventView = RemovalRunsQuery['removalRuns'][number]['events'][number];

/** Adds `events` to `known` by seq; repeats (a resubscription's replay) are dropped. */
export function mergeRemovalEvents(known: readonly RemovalEventView[], events: readonly RemovalEventView[]): readonly RemovalEventView[] {
  const seen = new Set(known.map((event) => event.seq));
  const fresh = events.filter((event) => !seen.has(event.seq));
  return fresh.length === 0 ? known : [...known, ...fresh].sort((a, b) => a.seq - b.seq);
}
