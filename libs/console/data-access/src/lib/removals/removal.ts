import type { RemovalPreviewQuery, RemovalRunsQuery } from '@ccos/shared/api-schema';

/** What a removal would do now (the RemovalPreview query). */
export type RemovalPreviewView = RemovalPreviewQuery['removalPreview'];

/** A removal run with its options and blocking pods, without events (the RemovalRunFields fragment). */
export type RemovalRunView = Omit<RemovalRunsQuery['removalRuns'][number], 'events'>;

/** One thing a removal run did or saw (the RemovalEventFields fragment). */
export type RemovalEventView = RemovalRunsQuery['removalRuns'][number]['events'][number];
