import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelayMs, EVENT_BACKOFF } from './backoff';

describe('Backoff', () => {
  it('doubles from 0.5 s and is capped at 30 s (events)', () => {
    const backoff = new Backoff(EVENT_BACKOFF, () => 1);
    const delays = Array.from({ length: 10 }, () => backoff.next());
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
  });

  it.each([0, 0.25, 0.5, 0.999])('keeps each jittered delay within [base/2, base] (random %s)', (r) => {
    const backoff = new Backoff(EVENT_BACKOFF, () => r);
    const bases = [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000];
    for (const base of bases) {
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(base / 2);
      expect(delay).toBeLessThanOrEqual(base);
    }
  });

  it('spreads agents that failed together (jitter)', () => {
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const delays = new Set(Array.from({ length: 20 }, () => new Backoff(EVENT_BACKOFF, random)).map((backoff) => {
      for (let i = 0; i < 7; i += 1) {
        backoff.next();
      }
      return backoff.next();
    }));
    expect(delays.size).toBeGreaterThan(10);
    expect(Math.max(...delays)).toBeLessThanOrEqual(30_000);
  });

  it('starts over after reset', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
    backoff.next();
    backoff.next();
    expect(backoff.attempts).toBe(2);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it.each([
    // The informer's: ±20 % around a base capped at 200 ms.
    [{ initialMs: 50, maxMs: 200, jitter: 0.2, spread: 'around' as const }, [0, 0.5, 0.9999], [[40, 50, 60], [80, 100, 120], [160, 200, 240], [160, 200, 240]]],
    // The event bus listener's: no jitter, 250 ms doubling to 10 s.
    [{ initialMs: 250, maxMs: 10_000, jitter: 0 }, [0, 0.9999], [[250, 250], [500, 500], [1000, 1000]]],
    // The console's reconnects: half to all of 1 s, 2 s … 30 s.
    [{ initialMs: 1_000, maxMs: 30_000 }, [0, 0.9999], [[500, 1000], [1000, 2000], [2000, 4000]]],
  ])('%o gives per attempt the delays of its randoms', (policy, randoms, expected) => {
    expected.forEach((delays, attempt) => {
      expect(randoms.map((random) => backoffDelayMs(policy, attempt, () => random))).toEqual(delays);
    });
  });
});
