import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, UserEntity, UserSessionEntity, UserSessionStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { TOPICS, createInProcessEventBus } from '@ccos/api/util-graphql';
import { SessionTokens } from './session-tokens';
import { DEFAULT_SESSION_LIMITS, type SessionLimits, SessionService } from './session.service';

const ORIGIN = { address: '10.1.0.1', userAgent: 'Mozilla/5.0 (X11) test' };

describe('session service', () => {
  let database: TestDatabase;
  let dataSource: Database;
  const tokens = new SessionTokens(new Uint8Array(32).fill(7), 3600);
  // Starts at the real time: jose checks a token's expiry against the real clock.
  let clock = Date.now();
  const now = () => clock;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 3 });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const newUser = async (): Promise<UserEntity> => {
    const users = dataSource.getRepository(UserEntity);
    return users.save(users.create({ id: randomUUID(), username: `u${randomUUID().slice(0, 8)}`, passwordHash: 'x', role: 'VIEWER', disabledAt: null }));
  };
  const service = (limits: Partial<SessionLimits> = {}) => new SessionService(new UserSessionStore(dataSource), tokens, createInProcessEventBus(), { ...DEFAULT_SESSION_LIMITS, ...limits }, now);

  it('refuses a session revoked by a replica whose announcement never arrived, once the cache time has passed', async () => {
    const user = await newUser();
    // Two replicas whose event buses are not connected: only the cache time can tell the second.
    const [here, there] = [service(), service()];
    const { token, session } = await here.start(user, ORIGIN);
    expect(await there.authenticate(token)).toMatchObject({ id: user.id, sessionId: session.id });
    await here.end(user.id, [session.id], 'signed out');
    expect(await here.authenticate(token)).toBeNull();
    clock += DEFAULT_SESSION_LIMITS.cacheMs - 1;
    expect(await there.authenticate(token)).not.toBeNull();
    clock += 2;
    expect(await there.authenticate(token)).toBeNull();
  });

  it('forgets every cached session once its event listener is back after a gap, and reads a fresh one when asked', async () => {
    const user = await newUser();
    const bus = createInProcessEventBus();
    const here = service();
    const there = new SessionService(new UserSessionStore(dataSource), tokens, bus, DEFAULT_SESSION_LIMITS, now);
    const stop = there.follow((error) => {
      throw error;
    });
    const { token, session } = await here.start(user, ORIGIN);
    expect(await there.authenticate(token)).toMatchObject({ sessionId: session.id });
    // Revoked elsewhere; the announcement is lost in the gap.
    await here.end(user.id, [session.id], 'signed out');
    expect(await there.authenticate(token)).not.toBeNull();
    expect(await there.authenticate(token, { fresh: true })).toBeNull();
    const { token: second } = await here.start(user, ORIGIN);
    expect(await there.authenticate(second)).not.toBeNull();
    await here.end(user.id, 'ALL', 'signed out');
    bus.publish(TOPICS.EVENTS_RESUMED);
    await expect.poll(() => there.authenticate(second)).toBeNull();
    stop();
  });

  it('keeps at most `cacheEntries` sessions in memory', async () => {
    const user = await newUser();
    const sessions = service({ cacheEntries: 3 });
    const started = await Promise.all(Array.from({ length: 6 }, () => sessions.start(user, ORIGIN)));
    for (const { token } of started) {
      expect(await sessions.authenticate(token)).not.toBeNull();
    }
    expect((sessions as unknown as { cache: Map<string, unknown> }).cache.size).toBe(3);
  });

  it('writes last use at most once a minute, and stores the origin cleaned of what Postgres cannot hold', async () => {
    const user = await newUser();
    const sessions = service();
    const { token, session } = await sessions.start(user, { address: '10.1.0.2', userAgent: `curl/8\u0000${'x'.repeat(1000)}` });
    const lastUsed = async () => (await dataSource.getRepository(UserSessionEntity).findOneByOrFail({ id: session.id })).lastUsedAt.getTime();
    const first = await lastUsed();
    clock += DEFAULT_SESSION_LIMITS.cacheMs + 1;
    await sessions.authenticate(token);
    expect(await lastUsed()).toBe(first);
    clock += DEFAULT_SESSION_LIMITS.lastUsedWriteMs;
    await sessions.authenticate(token);
    expect(await lastUsed()).toBe(clock);
    const stored = await dataSource.getRepository(UserSessionEntity).findOneByOrFail({ id: session.id });
    expect(stored.userAgent).toMatch(/^curl\/8x+$/);
    expect(stored.userAgent?.length).toBe(512);
  });

  it('ends the least recently used session when a user opens more than `activePerUser`', async () => {
    const user = await newUser();
    const sessions = service({ activePerUser: 2 });
    const oldest = await sessions.start(user, ORIGIN);
    clock += 1000;
    const middle = await sessions.start(user, ORIGIN);
    clock += 1000;
    const newest = await sessions.start(user, ORIGIN);
    expect((await sessions.active(user.id)).map((session) => session.id)).toEqual([newest.session.id, middle.session.id]);
    expect(await sessions.authenticate(oldest.token)).toBeNull();
    expect(await sessions.authenticate(middle.token)).not.toBeNull();
  });

  it('refuses a token whose user id does not match its session, and a token of a disabled user', async () => {
    const [user, other] = [await newUser(), await newUser()];
    const sessions = service();
    const { session, token } = await sessions.start(user, ORIGIN);
    const mismatched = await tokens.issue({ userId: other.id, sessionId: session.id }, new Date(clock + 60_000));
    expect(await sessions.authenticate(mismatched)).toBeNull();
    await dataSource.getRepository(UserEntity).update(user.id, { disabledAt: new Date(clock) });
    clock += DEFAULT_SESSION_LIMITS.cacheMs + 1;
    expect(await sessions.authenticate(token)).toBeNull();
  });
});
