import { describe, expect, it } from 'vitest';
import { MemoryFileSystem, MemoryLogger } from '@ccos/agent/util-host/testing';
import { Spool } from './spool';

const PATH = '/state/spool.jsonl';
const event = (message: string) => ({ step: 'PREFLIGHT' as const, status: 'PROGRESS' as const, progress: 10, message, detail: null, occurredAt: '2026-12-01T00:00:00.000Z' });

async function freshSpool(fs = new MemoryFileSystem().seed({ '/state/.keep': '' })) {
  return { fs, spool: await Spool.open(fs, PATH, 'run-1', new MemoryLogger()) };
}

describe('Spool', () => {
  it('numbers events from 1, in call order, fsynced before they are queued', async () => {
    const { fs, spool } = await freshSpool();
    const [a, b, c] = await Promise.all([spool.append(event('a')), spool.append(event('b')), spool.append(event('c'))]);
    expect([a?.seq, b?.seq, c?.seq]).toEqual([1, 2, 3]);
    expect(spool.undelivered().map((e) => e.message)).toEqual(['a', 'b', 'c']);
    expect(fs.synced.filter((path) => path === PATH)).toHaveLength(3);
    expect(fs.text(PATH)?.trim().split('\n')).toHaveLength(3);
  });

  it('after a restart, resends what was not delivered and continues numbering after the highest seq', async () => {
    const { fs, spool } = await freshSpool();
    for (const name of ['a', 'b', 'c', 'd']) {
      await spool.append(event(name));
    }
    await spool.markDelivered(1, false, new Date());
    await spool.markDelivered(2, true, new Date());
    const restarted = await Spool.open(fs, PATH, 'run-1', new MemoryLogger());
    expect(restarted.highestSeq).toBe(4);
    expect(restarted.undelivered().map((e) => e.seq)).toEqual([3, 4]);
    expect((await restarted.append(event('e'))).seq).toBe(5);
  });

  it('survives a torn last line (killed mid-write) and a foreign run', async () => {
    const fs = new MemoryFileSystem().seed({ '/state/.keep': '' });
    const { spool } = await freshSpool(fs);
    await spool.append(event('a'));
    await fs.appendFile(PATH, JSON.stringify({ type: 'event', event: { ...event('x'), runId: 'run-0', seq: 9 } }) + '\n');
    await fs.appendFile(PATH, '{"type":"event","event":{"runId":"run-1","se');
    const log = new MemoryLogger();
    const restarted = await Spool.open(fs, PATH, 'run-1', log);
    expect(restarted.highestSeq).toBe(1);
    expect(log.text()).toContain('skipped 2');
    await restarted.append(event('b'));
    const reopened = await Spool.open(fs, PATH, 'run-1', new MemoryLogger());
    expect(reopened.undelivered().map((e) => [e.seq, e.message])).toEqual([[1, 'a'], [2, 'b']]);
  });

  it('keeps a refused event in the file but does not send it again', async () => {
    const { fs, spool } = await freshSpool();
    await spool.append(event('a'));
    await spool.markRejected(1, 'BAD_USER_INPUT', new Date());
    expect(spool.undelivered()).toEqual([]);
    expect((await Spool.open(fs, PATH, 'run-1', new MemoryLogger())).undelivered()).toEqual([]);
  });

  it('replaces an undelivered event under its seq, also for an agent started again', async () => {
    const { fs, spool } = await freshSpool();
    const original = await spool.append(event('big'));
    await spool.append(event('next'));
    await spool.replace({ ...original, message: 'stand-in', detail: { detailRefused: 'too large' } });
    expect(spool.undelivered().map((e) => [e.seq, e.message])).toEqual([[1, 'stand-in'], [2, 'next']]);
    const restarted = await Spool.open(fs, PATH, 'run-1', new MemoryLogger());
    expect(restarted.undelivered().map((e) => [e.seq, e.message, e.detail])).toEqual([[1, 'stand-in', { detailRefused: 'too large' }], [2, 'next', null]]);
    expect(restarted.highestSeq).toBe(2);
  });

  it('records a batch\'s delivery with one fsync, and a restart sends none of it again', async () => {
    const { fs, spool } = await freshSpool();
    for (const name of ['a', 'b', 'c']) {
      await spool.append(event(name));
    }
    const synced = fs.synced.length;
    await spool.markDeliveredAll([{ seq: 1, duplicate: false }, { seq: 2, duplicate: true }], new Date());
    expect(fs.synced.length - synced).toBe(1);
    expect(spool.undelivered().map((e) => e.seq)).toEqual([3]);
    expect((await Spool.open(fs, PATH, 'run-1', new MemoryLogger())).undelivered().map((e) => e.seq)).toEqual([3]);
  });

  it('never supersedes an event a sender has on its way, only one spooled after it', async () => {
    const { spool } = await freshSpool();
    const same = () => true;
    await spool.append(event('first'));
    await spool.append(event('second'));
    spool.sending(2);
    // 2 may be stored already: the newer one gets its own seq.
    expect((await spool.appendOrSupersede(event('third'), same)).seq).toBe(3);
    expect((await spool.appendOrSupersede(event('fourth'), same)).seq).toBe(3);
    expect(spool.undelivered().map((e) => [e.seq, e.message])).toEqual([[1, 'first'], [2, 'second'], [3, 'fourth']]);
  });

  it('keeps going from memory when the disk is full', async () => {
    const fs = new MemoryFileSystem().seed({ '/state/.keep': '' });
    const log = new MemoryLogger();
    const spool = await Spool.open(fs, PATH, 'run-1', log);
    fs.failWith('ENOSPC', (path) => path === PATH);
    const appended = await spool.append(event('a'));
    expect(appended.seq).toBe(1);
    expect(spool.undelivered()).toHaveLength(1);
    expect(log.text()).toContain('could not record event 1: ENOSPC');
  });
});
