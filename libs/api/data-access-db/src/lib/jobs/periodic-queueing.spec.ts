import { afterEach, describe, expect, it, vi } from 'vitest';
import { PeriodicQueueing } from './periodic-queueing';

describe('periodic queueing', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('queues every interval until stopped, goes on after a failed round, and queues nothing with no interval', async () => {
    vi.useFakeTimers();
    const rounds: number[] = [];
    const failures: unknown[] = [];
    let round = 0;
    const queueing = new PeriodicQueueing(1_000, async () => {
      round += 1;
      rounds.push(round);
      if (round === 2) {
        throw new Error('database gone for a moment');
      }
    }, (error) => failures.push(error));
    queueing.start();
    queueing.start();
    await vi.advanceTimersByTimeAsync(3_500);
    expect(rounds).toEqual([1, 2, 3]);
    expect(failures).toEqual([new Error('database gone for a moment')]);
    queueing.stop();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(rounds).toEqual([1, 2, 3]);

    const off = new PeriodicQueueing(0, async () => void rounds.push(-1), () => undefined);
    off.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(rounds).not.toContain(-1);
  });
});
