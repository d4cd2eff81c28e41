import { describe, expect, it } from 'vitest';
import type { RemovalProgressPayload } from '@ccos/api/util-graphql';
import { progressTicks } from './removal-progress';

async function* announcements(payloads: RemovalProgressPayload[]): AsyncGenerator<RemovalProgressPayload> {
  yield* payloads;
}

describe('progressTicks', () => {
  it('starts with the current state, then passes announcements that can bring news and drops those already read', async () => {
    const payloads = [
      { nodeId: 'n', removalId: 'r1', seq: 3 },
      { nodeId: 'n', removalId: 'r1', seq: 4 },
      { nodeId: 'n', removalId: 'r1', seq: 9 },
      { nodeId: 'n', removalId: 'r2', seq: 1 },
    ];
    const seen: Array<RemovalProgressPayload | null> = [];
    for await (const tick of progressTicks('n', announcements(payloads))) {
      seen.push(tick.payload);
      // What the resolver does: it read run r1 up to seq 5 on the first announcement.
      if (tick.payload?.seq === 3) {
        tick.cursor.runId = 'r1';
        tick.cursor.lastSeq = 5;
      }
    }
    expect(seen).toEqual([null, payloads[0], payloads[2], payloads[3]]);
  });
});
