import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SshPool } from './ssh-pool';
import type { SshSession } from './ssh-session';
import type { SshTarget } from './ssh-target';

const target = (n: number): SshTarget => ({ host: `198.18.0.${10 + n}`, username: 'root', auth: { kind: 'password', password: 'pw' } });

/** A pool over fake sessions that records how many were open at once. */
function fakePool(maxSessions: number, serializePerHost = true) {
  const state = { open: 0, peak: 0, opened: 0, closed: 0 };
  const pool = new SshPool({
    maxSessions,
    serializePerHost,
    open: async (t) => {
      state.open += 1;
      state.opened += 1;
      state.peak = Math.max(state.peak, state.open);
      await sleep(1);
      return {
        target: t.host,
        close: async () => {
          state.open -= 1;
          state.closed += 1;
        },
      } as unknown as SshSession;
    },
  });
  return { pool, state };
}

describe('SshPool', () => {
  it('never holds more than maxSessions sessions and closes every one', async () => {
    const { pool, state } = fakePool(3);
    const results = await Promise.all(Array.from({ length: 10 }, (_, index) => pool.run(target(index), async (session) => {
      await sleep(5 + (index % 3) * 5);
      return session.target;
    })));
    expect(results).toHaveLength(10);
    expect(state.peak).toBe(3);
    expect(pool.stats.peak).toBe(3);
    expect(state).toMatchObject({ opened: 10, closed: 10, open: 0 });
    expect(pool.stats).toEqual({ active: 0, queued: 0, peak: 3 });
  });

  it('runs one task per host at a time, without making other hosts wait behind it', async () => {
    const { pool } = fakePool(5);
    const order: string[] = [];
    let releaseA1 = (): void => undefined;
    const a1Held = new Promise<void>((resolve) => {
      releaseA1 = resolve;
    });
    const task = (name: string, until: Promise<void> = Promise.resolve()) => async () => {
      order.push(`${name}+`);
      await until;
      order.push(`${name}-`);
    };
    const a1 = pool.run(target(1), task('a1', a1Held));
    const a2 = pool.run(target(1), task('a2'));
    // b finishes while a1 still holds host 1, and a2 has not started behind it.
    await pool.run(target(2), task('b'));
    expect(order).toContain('b-');
    expect(order).not.toContain('a1-');
    expect(order).not.toContain('a2+');
    releaseA1();
    await Promise.all([a1, a2]);
    expect(order.indexOf('a2+')).toBeGreaterThan(order.indexOf('a1-'));
  });

  it('lets the same host run in parallel when asked to', async () => {
    const { pool, state } = fakePool(5, false);
    await Promise.all([1, 2, 3].map(() => pool.run(target(1), () => sleep(10))));
    expect(state.peak).toBe(3);
  });

  it('releases the slot when a task fails, and passes the failure on', async () => {
    const { pool, state } = fakePool(1);
    await expect(pool.run(target(1), async () => {
      throw new Error('boom');
    })).rejects.toThrow('boom');
    await pool.run(target(2), async () => undefined);
    expect(state).toMatchObject({ opened: 2, closed: 2 });
  });

  it('releases the slot when the connection fails', async () => {
    const pool = new SshPool({ maxSessions: 1, open: async () => {
      throw new Error('unreachable');
    } });
    await expect(pool.run(target(1), async () => undefined)).rejects.toThrow('unreachable');
    expect(pool.stats).toEqual({ active: 0, queued: 0, peak: 1 });
  });

  it('drops a queued task on abort and on close', async () => {
    const { pool } = fakePool(1);
    const running = pool.run(target(1), () => sleep(20));
    const controller = new AbortController();
    const queued = pool.run(target(2), async () => 'ran', { signal: controller.signal });
    const dropped = pool.run(target(3), async () => 'ran');
    expect(pool.stats.queued).toBe(2);
    controller.abort(new Error('cancelled by the user'));
    await expect(queued).rejects.toThrow('cancelled by the user');
    const closing = pool.close();
    await expect(dropped).rejects.toThrow(/pool was closed/);
    await closing;
    await running;
    expect(pool.stats.active).toBe(0);
    await expect(pool.run(target(4), async () => 'late')).rejects.toThrow(/pool was closed/);
  });

  it('refuses a nonsense limit', () => {
    expect(() => new SshPool({ maxSessions: 0 })).toThrow(/positive integer/);
  });
});
