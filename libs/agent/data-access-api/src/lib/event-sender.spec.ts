import { describe, expect, it } from 'vitest';
import { FakeClock, MemoryFileSystem, MemoryLogger, settle } from '@ccos/agent/util-host/testing';
import { FakeApiClient, unauthenticated, unreachable } from '../testing/fake-api-client';
import { ApiError } from './api-errors';
import { EventSender, MAX_BATCH_BYTES, MAX_BATCH_EVENTS } from './event-sender';
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

  /** A download's PROGRESS: the same coded message, newer numbers. */
  const downloading = (step: 'DOWNLOAD_BINARIES' | 'INSTALL_PACKAGES', file: number) => ({
    step, status: 'PROGRESS' as const, progress: file * 10, message: `downloading file ${file}`, messageCode: 'agent.download.progress', messageParams: { index: file, count: 9 },
  });

  it('while events wait, a newer PROGRESS with the same message takes the place of the waiting one; every other event keeps its own', async () => {
    const { sender, api, fs, log } = await setup();
    let down = true;
    api.failReportStep = () => (down ? unreachable() : null);
    sender.start();
    await sender.report({ step: 'DOWNLOAD_BINARIES', status: 'STARTED', progress: 0, message: 'started' });
    await sender.report({ step: 'DOWNLOAD_BINARIES', status: 'PROGRESS', progress: 0, message: 'warning: plain HTTP', messageCode: 'agent.plainHttp', messageParams: {} });
    for (const file of [1, 2, 3]) {
      await sender.report(downloading('DOWNLOAD_BINARIES', file));
    }
    await sender.report({ step: 'DOWNLOAD_BINARIES', status: 'PROGRESS', progress: 30, message: 'link interrupted, resuming', messageCode: 'agent.download.progressResuming', messageParams: {} });
    await sender.report(downloading('DOWNLOAD_BINARIES', 4));
    await sender.report({ step: 'DOWNLOAD_BINARIES', status: 'SUCCEEDED', progress: 100, message: 'done' });
    await sender.report(downloading('INSTALL_PACKAGES', 1));
    expect(sender.pendingCount).toBe(7);
    down = false;
    sender.retryNow();
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.events().map((e) => [e.seq, e.step, e.status, e.message])).toEqual([
      [1, 'DOWNLOAD_BINARIES', 'STARTED', 'started'],
      [2, 'DOWNLOAD_BINARIES', 'PROGRESS', 'warning: plain HTTP'],
      [3, 'DOWNLOAD_BINARIES', 'PROGRESS', 'downloading file 3'],
      [4, 'DOWNLOAD_BINARIES', 'PROGRESS', 'link interrupted, resuming'],
      [5, 'DOWNLOAD_BINARIES', 'PROGRESS', 'downloading file 4'],
      [6, 'DOWNLOAD_BINARIES', 'SUCCEEDED', 'done'],
      [7, 'INSTALL_PACKAGES', 'PROGRESS', 'downloading file 1'],
    ]);
    await sender.stop();
    // An agent started again over the same spool has nothing left to send and numbers on after 7.
    const reopened = await Spool.open(fs, '/state/spool.jsonl', 'run-1', log);
    expect(reopened.undelivered()).toEqual([]);
    expect(reopened.highestSeq).toBe(7);
  });

  it('sends each PROGRESS when the service keeps up', async () => {
    const { sender, api } = await setup();
    sender.start();
    for (const file of [1, 2, 3]) {
      await sender.report(downloading('DOWNLOAD_BINARIES', file));
      expect(await sender.drain(60_000)).toBe('drained');
    }
    expect(api.events().map((e) => e.message)).toEqual(['downloading file 1', 'downloading file 2', 'downloading file 3']);
    await sender.stop();
  });

  it('sends what piled up while the service was down as batches, in order, each event once', async () => {
    const { sender, api, spool, clock } = await setup();
    let down = true;
    api.failReportStep = () => (down ? unreachable() : null);
    sender.start();
    for (let index = 1; index <= 120; index++) {
      await sender.report(input(`event ${index}`));
    }
    await clock.advance(1_000);
    down = false;
    const whileDown = api.requests.length;
    sender.retryNow();
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.events().map((e) => e.seq)).toEqual(Array.from({ length: 120 }, (_, index) => index + 1));
    const delivered = api.requests.slice(whileDown);
    expect(delivered.map((events) => events.length)).toEqual([MAX_BATCH_EVENTS, MAX_BATCH_EVENTS, 120 - 2 * MAX_BATCH_EVENTS]);
    expect(delivered.flat().map((e) => e.seq)).toEqual(Array.from({ length: 120 }, (_, index) => index + 1));
    expect(spool.undelivered()).toEqual([]);
    await sender.stop();
  });

  it('keeps each batch under the bytes a request may carry, and sends an event too large to share one alone', async () => {
    const { sender, api } = await setup();
    let down = true;
    api.failReportStep = () => (down ? unreachable() : null);
    sender.start();
    await sender.report(input('small 1'));
    await sender.report({ ...input('large'), detail: { outputTail: 'x'.repeat(MAX_BATCH_BYTES) } });
    for (let index = 2; index <= 30; index++) {
      await sender.report({ ...input(`small ${index}`), detail: { outputTail: 'y'.repeat(2_000) } });
    }
    down = false;
    sender.retryNow();
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.events()).toHaveLength(31);
    const batches = api.requests.filter((request) => request.length > 1);
    expect(batches.length).toBeGreaterThan(1);
    for (const events of batches) {
      expect(Buffer.byteLength(JSON.stringify(events))).toBeLessThanOrEqual(MAX_BATCH_BYTES);
      expect(events.some((e) => e.message === 'large')).toBe(false);
    }
    expect(api.requests.some((events) => events.length === 1 && events[0].message === 'large')).toBe(true);
    await sender.stop();
  });

  it('sends one event at a time to a service from before batches, after its first refusal of one', async () => {
    const { sender, api, log } = await setup();
    api.takesBatches = false;
    let down = true;
    api.failReportStep = () => (down ? unreachable() : null);
    sender.start();
    for (const name of ['a', 'b', 'c', 'd']) {
      await sender.report(input(name));
    }
    down = false;
    sender.retryNow();
    expect(await sender.drain(60_000)).toBe('drained');
    expect(api.events().map((e) => e.message)).toEqual(['a', 'b', 'c', 'd']);
    expect(api.requests.slice(-4).map((events) => events.map((e) => e.seq))).toEqual([[1], [2], [3], [4]]);
    expect(log.text()).toContain('the service takes no batches of events');
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
    const attempts = api.requests.length;
    expect(attempts).toBeGreaterThan(20);
    expect(attempts).toBeLessThan(40);
    expect(api.requests.every((events) => events[0].seq === 1)).toBe(true);
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

  it('sends a refused event again at once without its detail, keeping its place, code and hint', async () => {
    const { sender, api, log, clock, fs } = await setup();
    const tooLarge = new ApiError('rejected', 'BAD_USER_INPUT', 'input.detail is 40000 bytes as JSON; at most 16384 are accepted');
    api.failReportStep = (event) => (event.detail?.['outputTail'] !== undefined ? tooLarge : null);
    sender.start();
    const started = clock.monotonic();
    await sender.report({ step: 'START_KUBELET', status: 'FAILED', progress: 40, message: 'kubelet died', detail: { code: 'KUBELET_DIED', hint: 'Read the journal.', outputTail: 'x'.repeat(40_000) } });
    await sender.report(input('after'));
    expect(await sender.drain(60_000)).toBe('drained');
    // No backoff and no loop: one refusal, one stand-in.
    expect(clock.monotonic() - started).toBeLessThan(1_000);
    expect(api.attempts.map((e) => e.seq)).toEqual([1, 1, 2]);
    expect(api.events()[0]).toMatchObject({
      seq: 1,
      step: 'START_KUBELET',
      status: 'FAILED',
      message: 'kubelet died',
      detail: { code: 'KUBELET_DIED', hint: 'Read the journal.', detailRefused: expect.stringContaining('the service refused this event (BAD_USER_INPUT: input.detail is 40000 bytes') },
    });
    expect(api.events()[0]?.detail).not.toHaveProperty('outputTail');
    expect(log.text()).toContain('sending it again without its detail');
    // The spool holds the stand-in too, so an agent started before the ack would send it, not the original.
    const lines = (await fs.readFile('/state/spool.jsonl')).toString('utf8').trim().split('\n');
    expect(lines.filter((line) => line.includes('"type":"event"') && line.includes('"seq":1,')).map((line) => line.includes('detailRefused'))).toEqual([false, true]);
    await sender.stop();
  });

  it('drops a stand-in the service refuses too (e.g. over the run\'s limit), notes it, and goes on without retrying', async () => {
    const { sender, api, log, fs, clock } = await setup();
    const limit = new ApiError('rejected', 'LIMIT_EXCEEDED', 'run run-1 already has 5000 step events');
    api.failReportStep = (event) => (event.seq === 1 ? limit : null);
    sender.start();
    const started = clock.monotonic();
    await sender.report(input('a'));
    await sender.report(input('b'));
    expect(await sender.drain(60_000)).toBe('drained');
    expect(clock.monotonic() - started).toBeLessThan(1_000);
    // Alone, as it was and as a stand-in (a batch holding it was refused whole, so it went alone again).
    expect(api.requests.filter((events) => events.length === 1 && events[0].seq === 1)).toHaveLength(2);
    expect(api.events().map((e) => e.seq)).toEqual([2]);
    expect(log.text()).toContain('dropped, noted in the spool');
    const lines = (await fs.readFile('/state/spool.jsonl')).toString('utf8');
    expect(lines).toContain('"type":"rejected","seq":1,"error":"run run-1 already has 5000 step events"');
    const reopened = await Spool.open(fs, '/state/spool.jsonl', 'run-1', log);
    expect(reopened.undelivered()).toEqual([]);
    await sender.stop();
  });

  it('stops for good when the service says the run has ended: one attempt, no stand-in, no retry, nothing left to send after a restart', async () => {
    const { sender, api, log, fs, clock } = await setup();
    const ended = new ApiError('finished', 'RUN_FINISHED', 'reportStep: run run-1 has ended (CANCELLED); this FAILED event of PREFLIGHT was not stored');
    api.failReportStep = (event) => (event.seq >= 2 ? ended : null);
    let told = 0;
    const watched = new EventSender({ spool: await Spool.open(fs, '/state/other.jsonl', 'run-1', log), api, clock, log, onRunFinished: () => (told += 1) });
    await sender.stop();
    watched.start();
    for (const name of ['a', 'b', 'c']) {
      await watched.report(input(name));
    }
    const started = clock.monotonic();
    expect(await watched.drain(60 * 60_000)).toBe('finished');
    expect(clock.monotonic() - started).toBeLessThan(1_000);
    expect(watched.runFinished).toBe(true);
    expect(told).toBe(1);
    expect(api.attempts.map((e) => e.seq)).toEqual([1, 2]);
    expect(api.events().map((e) => e.seq)).toEqual([1]);
    expect(log.text()).toContain('the service says the run has ended');
    const reopened = await Spool.open(fs, '/state/other.jsonl', 'run-1', log);
    expect(reopened.undelivered()).toEqual([]);
    await watched.stop();
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
