import { describe, expect, it } from 'vitest';
import { Backoff, EVENT_BACKOFF } from './backoff';

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
});
