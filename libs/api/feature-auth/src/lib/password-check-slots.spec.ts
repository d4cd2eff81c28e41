import { afterEach, describe, expect, it, vi } from 'vitest';
import { NoPasswordCheckSlot, PasswordCheckSlots } from './password-check-slots';

/** A check that finishes when the test says so. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, check: () => opened };
}

const reasonOf = (attempt: Promise<unknown>) => attempt.then(() => 'ran', (error: unknown) => (error instanceof NoPasswordCheckSlot ? error.reason : String(error)));

describe('password check slots', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at most `concurrent` checks at once and hands a freed slot to the next in line', async () => {
    const slots = new PasswordCheckSlots({ concurrent: 2, queued: 10, maxWaitMs: 60_000, knownMaxWaitMs: 60_000, perAddress: 10 });
    const gates = Array.from({ length: 5 }, gate);
    const runs = gates.map((g, index) => slots.run(`10.0.0.${index}`, g.check));
    expect(slots.stats).toEqual({ running: 2, waiting: 3, peak: 2 });
    gates[0].open();
    await runs[0];
    expect(slots.stats).toMatchObject({ running: 2, waiting: 2 });
    gates.forEach((g) => g.open());
    await Promise.all(runs);
    expect(slots.stats).toEqual({ running: 0, waiting: 0, peak: 2 });
  });

  it('refuses at once when the queue is full, and after the longest wait', async () => {
    vi.useFakeTimers();
    const slots = new PasswordCheckSlots({ concurrent: 1, queued: 1, maxWaitMs: 2_000, knownMaxWaitMs: 5_000, perAddress: 10 });
    const running = gate();
    const first = slots.run('10.0.0.1', running.check);
    const waiting = reasonOf(slots.run('10.0.0.2', async () => undefined));
    expect(await reasonOf(slots.run('10.0.0.3', async () => undefined))).toBe('QUEUE_FULL');
    await vi.advanceTimersByTimeAsync(2_001);
    expect(await waiting).toBe('TIMED_OUT');
    running.open();
    await first;
    expect(slots.stats).toEqual({ running: 0, waiting: 0, peak: 1 });
  });

  it('lets one address hold only its share of running and waiting checks', async () => {
    const slots = new PasswordCheckSlots({ concurrent: 4, queued: 32, maxWaitMs: 60_000, knownMaxWaitMs: 60_000, perAddress: 2 });
    const gates = [gate(), gate()];
    const mine = gates.map((g) => slots.run('10.0.0.1', g.check));
    expect(await reasonOf(slots.run('10.0.0.1', async () => undefined))).toBe('ADDRESS_FULL');
    expect(await reasonOf(slots.run('10.0.0.2', async () => undefined))).toBe('ran');
    gates.forEach((g) => g.open());
    await Promise.all(mine);
    expect(await reasonOf(slots.run('10.0.0.1', async () => undefined))).toBe('ran');
  });

  it('serves a known pair first and makes room for it in a full queue by turning the newest unknown waiter away', async () => {
    const slots = new PasswordCheckSlots({ concurrent: 1, queued: 2, maxWaitMs: 60_000, knownMaxWaitMs: 60_000, perAddress: 1 });
    const order: string[] = [];
    const running = gate();
    const first = slots.run('10.0.0.1', running.check);
    const attempt = (name: string, address: string, known = false) => reasonOf(slots.run(address, async () => void order.push(name), known));
    const early = attempt('early guess', '10.0.0.2');
    const late = attempt('late guess', '10.0.0.3');
    expect(await reasonOf(slots.run('10.0.0.4', async () => undefined))).toBe('QUEUE_FULL');
    // The user from their usual address: first in line; the newest guess leaves the queue. Their address's share does not stop them.
    const user = attempt('user', '10.0.0.1', true);
    expect(await late).toBe('QUEUE_FULL');
    running.open();
    await first;
    expect([await user, await early]).toEqual(['ran', 'ran']);
    expect(order).toEqual(['user', 'early guess']);
  });

  it('frees the slot when a check throws', async () => {
    const slots = new PasswordCheckSlots({ concurrent: 1, queued: 0, maxWaitMs: 1_000, knownMaxWaitMs: 1_000, perAddress: 1 });
    await expect(slots.run('10.0.0.1', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await reasonOf(slots.run('10.0.0.1', async () => undefined))).toBe('ran');
  });
});
