import type { RemovalProgressPayload } from '@ccos/api/util-graphql';

/** What one removalProgress subscriber has been sent so far. */
export interface ProgressCursor {
  runId: string | null;
  /** Start of that run (ms), to tell an older run's late announcement from a newer run. */
  startedAt: number;
  lastSeq: number;
}

/** One reason to send a removalProgress message: the first message (no payload), or an announcement. */
export interface ProgressTick {
  readonly nodeId: string;
  readonly cursor: ProgressCursor;
  readonly payload: RemovalProgressPayload | null;
}

/**
 * The ticks of one subscription: first the current state, then one per announcement that can
 * bring news. The live stream is subscribed before the first tick is produced, so nothing
 * published in between is lost; announcements of events already sent are dropped (a burst of
 * evictions becomes few messages for a subscriber that reads them together).
 */
export async function* progressTicks(nodeId: string, live: AsyncIterable<RemovalProgressPayload>): AsyncGenerator<ProgressTick> {
  const cursor: ProgressCursor = { runId: null, startedAt: 0, lastSeq: 0 };
  const iterator = live[Symbol.asyncIterator]();
  try {
    yield { nodeId, cursor, payload: null };
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        return;
      }
      if (next.value.removalId === cursor.runId && next.value.seq < cursor.lastSeq) {
        continue;
      }
      yield { nodeId, cursor, payload: next.value };
    }
  } finally {
    await iterator.return?.();
  }
}
