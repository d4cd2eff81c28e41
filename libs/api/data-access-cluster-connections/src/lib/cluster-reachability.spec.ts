import { describe, expect, it } from 'vitest';
import { ClusterReachability } from './cluster-reachability';

describe('ClusterReachability', () => {
  const setup = () => {
    let now = 1_000_000;
    const memo = new ClusterReachability({ retryAfterMs: 5_000, now: () => now });
    return { memo, advance: (ms: number) => (now += ms), now: () => now };
  };

  it('answers reads of a failed cluster from memory, letting one through per retry period', () => {
    const { memo, advance, now } = setup();
    expect(memo.outage('a')).toBeNull();
    const recorded = memo.failed('a', new Error('ECONNREFUSED'));
    expect(recorded).toEqual({ since: now(), error: expect.any(Error), retryAt: now() + 5_000 });
    advance(4_999);
    expect(memo.outage('a')?.error.message).toBe('ECONNREFUSED');
    advance(1);
    // Due: this read tries the cluster; the ones right after it are answered from memory again.
    expect(memo.outage('a')).toBeNull();
    expect(memo.outage('a')?.retryAt).toBe(now() + 5_000);
    expect(memo.outage('b')).toBeNull();
  });

  it('keeps the start of an outage across failures and forgets it once the cluster answers', () => {
    const { memo, advance } = setup();
    const first = memo.failed('a', new Error('one'));
    advance(7_000);
    const again = memo.failed('a', new Error('two'));
    expect(again.since).toBe(first.since);
    expect(again.error.message).toBe('two');
    expect(memo.isDown('a')).toBe(true);
    memo.answered('a');
    expect(memo.isDown('a')).toBe(false);
    expect(memo.outage('a')).toBeNull();
  });
});
