import { describe, expect, it } from 'vitest';
import { FakeClock, MemoryFileSystem, MemoryLogger, settle } from '@ccos/agent/util-host/testing';
import { FakeApiClient, unauthenticated, unreachable } from '../testing/fake-api-client';
import { ApiError } from './api-errors';
import { EventSender } from './event-sender';
import type { StepEvent } from './operations';
import { Spool } from './spool';

async function setup(random = () => 0.5) {
  const clock = new FakeClock();
  const fs = new MemoryFileSystem().seed({ '/state/.keep': '' });
  const log = new MemoryLogger();
  const api = new FakeApiClient(clock);
  const spool = await Spool.open(fs, '/state/spool.jsonl', 'run-1', log);
  const cancels: number[] = [];
  let refused = 0;
  const sender = new EventSender({
    spool, api, clock, log, random,
    onCancelRequested: () => cancels.push(clock.monotonic()),
    onUnauthenticated: () => (refused += 1),
  });
  return { clock, fs, log, api, spool, sender, cancels, refused: () => refused };
}

const input = (message: string) => ({ step: 'PREFLIGHT' as const, status: 'PROGRESS' as const, progress: 1, message });

describe('EventSender', () => {
  it('delivers in sequence order and drains', async () => {
    const { sender, api } = await setup();
    sender.start();
    for (const name of ['a', 'b', 'c']) {
      await sender.report(input(name));
    }
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.events().map((e) => [e.seq, e.message])).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
    expect(api.attempts.map((e) => e.seq)).toEqual([1, 2, 3]);
    await sender.stop();
  });

  it('retries while the service is down with capped, jittered backoff and keeps the order', async () => {
    const { sender, api, clock } = await setup(() => 0.999);
    let down = true;
    api.failReportStep = () => (down ? unreachable() : null);
    sender.start();
    await sender.report(input('a'));
    await sender.report(input('b'));
    await clock.advance(10 * 60_000);
    const attempts = api.attempts.length;
    expect(attempts).toBeGreaterThan(20);
    expect(attempts).toBeLessThan(40);
    expect(api.attempts.every((e) => e.seq === 1)).toBe(true);
    down = false;
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.events().map((e) => e.message)).toEqual(['a', 'b']);
    await sender.stop();
  });

  it('never waits longer than 30 s between attempts, and waits at least half of each step', async () => {
    const { sender, api, clock } = await setup(() => 0);
    const times: number[] = [];
    api.failReportStep = () => {
      times.push(clock.monotonic());
      return unreachable('ETIMEDOUT');
    };
    sender.start();
    await sender.report(input('a'));
    await clock.advance(5 * 60_000);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(gaps.slice(0, 7)).toEqual([250, 500, 1000, 2000, 4000, 8000, 15000]);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(30_000);
    await sender.stop();
  });

  it('retryNow cuts a long backoff short (the last flush before exiting)', async () => {
    const { sender, api, clock } = await setup(() => 0.999);
    let down = true;
    api.failReportStep = () => (down ? unreachable() : null);
    sender.start();
    await sender.report(input('a'));
    await clock.advance(60_000);
    const before = clock.monotonic();
    down = false;
    sender.retryNow();
    expect(await sender.drain(1_000)).toBe('drained');
    expect(clock.monotonic() - before).toBeLessThan(1_000);
    await sender.stop();
  });

  it('stops for good when the token is refused', async () => {
    const { sender, api, refused } = await setup();
    api.failReportStep = () => unauthenticated();
    sender.start();
    await sender.report(input('a'));
    expect(await sender.drain(60_000)).toBe('unauthenticated');
    expect(sender.unauthenticated).toBe(true);
    expect(refused()).toBe(1);
    expect(api.attempts).toHaveLength(1);
    await sender.stop();
  });

  it('sets aside an event the service refuses three times, then goes on', async () => {
    const { sender, api, log } = await setup();
    api.failReportStep = (event) => (event.seq === 1 ? new ApiError('rejected', 'BAD_USER_INPUT', 'detail is too large') : null);
    sender.start();
    await sender.report(input('a'));
    await sender.report(input('b'));
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.attempts.filter((e) => e.seq === 1)).toHaveLength(3);
    expect(api.events().map((e) => e.seq)).toEqual([2]);
    expect(log.text()).toContain('setting it aside');
    await sender.stop();
  });

  it('tells when the operator cancelled', async () => {
    const { sender, api, cancels } = await setup();
    sender.start();
    await sender.report(input('a'));
    await sender.drain(1_000);
    expect(cancels).toHaveLength(0);
    api.run = { ...api.run, cancelRequested: true };
    await sender.report(input('b'));
    await sender.drain(1_000);
    expect(cancels).toHaveLength(1);
    await sender.stop();
  });

  it('resends the previous agent\'s undelivered events first; re-sending a delivered one is harmless', async () => {
    const { fs, api, clock, log } = await setup();
    const first = await Spool.open(fs, '/state/spool.jsonl', 'run-1', log);
    await first.append({ step: 'PREFLIGHT', status: 'STARTED', progress: 0, message: 'old', detail: null, occurredAt: new Date(clock.now()).toISOString() });
    // Delivered, but the agent died before recording it.
    await api.reportStep(first.undelivered()[0] as StepEvent);
    const spool = await Spool.open(fs, '/state/spool.jsonl', 'run-1', log);
    const sender = new EventSender({ spool, api, clock, log });
    sender.start();
    await sender.report(input('new'));
    expect(await sender.drain(10_000)).toBe('drained');
    expect(api.events().map((e) => [e.seq, e.message])).toEqual([[1, 'old'], [2, 'new']]);
    await sender.stop();
  });

  it('drain gives up at its limit and stop ends the loop while backing off', async () => {
    const { sender, api } = await setup();
    api.failReportStep = () => unreachable();
    sender.start();
    await sender.report(input('a'));
    expect(await sender.drain(5_000)).toBe('timeout');
    await sender.stop();
    await settle();
    expect(sender.pendingCount).toBe(1);
  });
});
