import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type EventBus, TOPICS, createInProcessEventBus } from '@ccos/api/util-graphql';
import { type LiveSessions, type LiveSocket, type SessionRecheck, trackLiveSessions } from './live-sessions';

/** A socket that records how it was closed. */
class FakeSocket extends EventEmitter implements LiveSocket {
  readonly OPEN = 1;
  readyState = 1;
  closedWith: { code?: number; reason?: string } | null = null;

  close(code: number, reason = ''): void {
    this.closedWith = { code, reason };
    this.readyState = 3;
    this.emit('close');
  }
}

/** Resolves once the socket is closed: a session event is handled in one pass, so whatever it left open then stays open. */
const closing = (socket: FakeSocket) => new Promise<void>((resolve) => (socket.readyState === socket.OPEN ? socket.once('close', () => resolve()) : resolve()));

/** For connections whose session no test reads again. */
const notReadAgain: SessionRecheck = () => Promise.reject(new Error('this test never reads the session again'));

describe('live sessions', () => {
  let bus: EventBus;
  let sessions: LiveSessions;
  const user = (id: string, sessionExpiresAt?: Date, sessionId?: string) => ({ id, username: id, role: 'VIEWER' as const, sessionExpiresAt, sessionId });

  afterEach(() => sessions?.stop());

  it("closes every connection of a user whose sessions ended, and nobody else's", async () => {
    bus = createInProcessEventBus();
    sessions = trackLiveSessions(bus, pino({ level: 'silent' }));
    const [laptop, phone, other] = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
    sessions.add(user('u1'), laptop, notReadAgain);
    sessions.add(user('u1'), phone, notReadAgain);
    sessions.add(user('u2'), other, notReadAgain);
    bus.publish(TOPICS.SESSIONS_ENDED, { userId: 'u1' });
    await Promise.all([closing(laptop), closing(phone)]);
    expect(laptop.closedWith).toEqual({ code: 4403, reason: 'Forbidden: the session has ended' });
    expect(phone.closedWith?.code).toBe(4403);
    expect(other.closedWith).toBeNull();
  });

  it("closes only the connections of the sessions that ended, when they are named", async () => {
    bus = createInProcessEventBus();
    sessions = trackLiveSessions(bus, pino({ level: 'silent' }));
    const [laptop, laptopTab, phone] = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
    sessions.add(user('u1', undefined, 's-laptop'), laptop, notReadAgain);
    sessions.add(user('u1', undefined, 's-laptop'), laptopTab, notReadAgain);
    sessions.add(user('u1', undefined, 's-phone'), phone, notReadAgain);
    bus.publish(TOPICS.SESSIONS_ENDED, { userId: 'u1', sessionIds: ['s-laptop'] });
    await Promise.all([closing(laptop), closing(laptopTab)]);
    expect([laptop.closedWith?.code, laptopTab.closedWith?.code, phone.closedWith]).toEqual([4403, 4403, null]);
    bus.publish(TOPICS.SESSIONS_ENDED, { userId: 'u1' });
    await closing(phone);
    expect(phone.closedWith?.code).toBe(4403);
  });

  it("asks a user's connections to reconnect when their role changed", async () => {
    bus = createInProcessEventBus();
    sessions = trackLiveSessions(bus, pino({ level: 'silent' }));
    const [mine, theirs] = [new FakeSocket(), new FakeSocket()];
    sessions.add(user('u1', undefined, 's1'), mine, notReadAgain);
    sessions.add(user('u2', undefined, 's2'), theirs, notReadAgain);
    bus.publish(TOPICS.USER_CHANGED, { userId: 'u1' });
    await closing(mine);
    expect(mine.closedWith).toEqual({ code: 1012, reason: "the user's role changed; reconnect" });
    expect(theirs.closedWith).toBeNull();
    theirs.close(1000);
  });

  it('closes a connection when its session token expires, not a moment before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      bus = createInProcessEventBus();
      sessions = trackLiveSessions(bus, pino({ level: 'silent' }));
      const expiring = new FakeSocket();
      const lasting = new FakeSocket();
      sessions.add(user('u1', new Date(Date.now() + 50)), expiring, notReadAgain);
      sessions.add(user('u2', new Date(Date.now() + 3_600_000)), lasting, notReadAgain);
      vi.advanceTimersByTime(49);
      expect(expiring.closedWith).toBeNull();
      vi.advanceTimersByTime(1);
      expect(expiring.closedWith).toEqual({ code: 4403, reason: 'Forbidden: the session has expired' });
      vi.advanceTimersByTime(3_599_000);
      expect(lasting.closedWith).toBeNull();
      vi.advanceTimersByTime(1_000);
      expect(lasting.closedWith).toEqual({ code: 4403, reason: 'Forbidden: the session has expired' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads every live connection\'s session again once announcements may have been missed, and closes as they would have', async () => {
    bus = createInProcessEventBus();
    sessions = trackLiveSessions(bus, pino({ level: 'silent' }));
    const [unchanged, ended, promoted] = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
    // Read again in the order added: once the later two are closed, the first one's answer has been acted on.
    let readAgain = 0;
    sessions.add(user('u3', undefined, 's-unchanged'), unchanged, async () => {
      readAgain++;
      return user('u3', undefined, 's-unchanged');
    });
    sessions.add(user('u1', undefined, 's-ended'), ended, async () => null);
    sessions.add(user('u2', undefined, 's-promoted'), promoted, async () => ({ ...user('u2', undefined, 's-promoted'), role: 'ADMIN' as const }));
    bus.publish(TOPICS.EVENTS_RESUMED);
    await Promise.all([closing(ended), closing(promoted)]);
    expect([ended.closedWith, promoted.closedWith]).toEqual([
      { code: 4403, reason: 'Forbidden: the session has ended' },
      { code: 1012, reason: "the user's role changed; reconnect" },
    ]);
    expect([readAgain, unchanged.closedWith]).toEqual([1, null]);
  });
});
