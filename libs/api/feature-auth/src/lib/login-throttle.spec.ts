import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Database, loginLimitStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { DEFAULT_LOGIN_LIMITS, LoginThrottle } from './login-throttle';

/**
 * Against the real Postgres store. rate-limiter-flexible computes every expiry from
 * Date.now() in this process, so faking Date is the clock: no test waits for a lock to pass.
 */
describe('login throttle', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let otherReplica: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 2 });
    otherReplica = await openDatabase({ url: database.url, maxConnections: 2 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await otherReplica?.destroy();
    await dataSource?.destroy();
    await database?.drop();
  });

  const failTimes = async (throttle: LoginThrottle, username: string, address: string, times: number) => {
    for (let failure = 0; failure < times; failure += 1) {
      await throttle.recordFailure(username, address);
    }
  };

  it('lets the free failures through, then doubles the wait with every further failure up to the cap', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-12-01T10:00:00Z') });
    const throttle = new LoginThrottle(loginLimitStore(dataSource));
    await failTimes(throttle, 'admin', '10.0.0.1', 4);
    expect(await throttle.waitFor('admin', '10.0.0.1')).toBeNull();
    const waits: number[] = [];
    for (let failure = 5; failure <= 12; failure += 1) {
      await throttle.recordFailure('admin', '10.0.0.1');
      const wait = await throttle.waitFor('admin', '10.0.0.1');
      waits.push(wait?.seconds ?? 0);
      expect(wait?.scope).toBe('USER');
      // The lock has passed: the next attempt may try (and fail) again.
      vi.setSystemTime(Date.now() + (wait?.seconds ?? 0) * 1000 + 1);
      expect(await throttle.waitFor('admin', '10.0.0.1')).toBeNull();
    }
    expect(waits).toEqual([15, 30, 60, 120, 240, 480, 900, 900]);
  });

  it('keys failures by user name and address: the same user from another address, and another user from the same address, are not slowed', async () => {
    const throttle = new LoginThrottle(loginLimitStore(dataSource));
    await failTimes(throttle, 'alice', '10.0.1.1', 10);
    expect(await throttle.waitFor('alice', '10.0.1.1')).toMatchObject({ scope: 'USER' });
    expect(await throttle.waitFor('alice', '10.0.1.2')).toBeNull();
    expect(await throttle.waitFor('bob', '10.0.1.1')).toBeNull();
  });

  it('forgets a pair\'s failures after a success', async () => {
    const throttle = new LoginThrottle(loginLimitStore(dataSource));
    await failTimes(throttle, 'carol', '10.0.2.1', 4);
    await throttle.recordSuccess('carol', '10.0.2.1');
    await failTimes(throttle, 'carol', '10.0.2.1', 4);
    expect(await throttle.waitFor('carol', '10.0.2.1')).toBeNull();
  });

  it('gives one address a budget of failures over all user names', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-12-01T12:00:00Z') });
    const throttle = new LoginThrottle(loginLimitStore(dataSource));
    for (let name = 0; name < DEFAULT_LOGIN_LIMITS.addressFailures - 1; name += 1) {
      await throttle.recordFailure(`user${name}`, '10.0.3.1');
    }
    expect(await throttle.waitFor('another', '10.0.3.1')).toBeNull();
    await throttle.recordFailure('last-one', '10.0.3.1');
    expect(await throttle.waitFor('another', '10.0.3.1')).toEqual({ scope: 'ADDRESS', seconds: DEFAULT_LOGIN_LIMITS.addressWindowSeconds });
    expect(await throttle.waitFor('another', '10.0.3.2')).toBeNull();
    vi.setSystemTime(Date.now() + DEFAULT_LOGIN_LIMITS.addressWindowSeconds * 1000 + 1);
    expect(await throttle.waitFor('another', '10.0.3.1')).toBeNull();
  });

  it('knows a user name that signed in from an address, there only', async () => {
    const throttle = new LoginThrottle(loginLimitStore(dataSource));
    expect(await throttle.assess('erin', '10.0.6.1')).toEqual({ wait: null, known: false });
    await throttle.recordSuccess('erin', '10.0.6.1');
    expect(await throttle.assess('erin', '10.0.6.1')).toEqual({ wait: null, known: true });
    expect(await throttle.assess('erin', '10.0.6.2')).toEqual({ wait: null, known: false });
    expect(await throttle.assess('frank', '10.0.6.1')).toEqual({ wait: null, known: false });
    // Known or not, failures still slow the pair down.
    await failTimes(throttle, 'erin', '10.0.6.1', 5);
    expect(await throttle.assess('erin', '10.0.6.1')).toEqual({ wait: { scope: 'USER', seconds: 15 }, known: true });
  });

  it('is shared by every replica on the database', async () => {
    const here = new LoginThrottle(loginLimitStore(dataSource));
    const there = new LoginThrottle(loginLimitStore(otherReplica));
    await failTimes(here, 'dave', '10.0.4.1', 3);
    await failTimes(there, 'dave', '10.0.4.1', 2);
    expect(await here.waitFor('dave', '10.0.4.1')).toEqual({ scope: 'USER', seconds: 15 });
    expect(await there.waitFor('dave', '10.0.4.1')).toEqual({ scope: 'USER', seconds: 15 });
  });

  it('stores any user name in a bounded key, NUL bytes and megabytes included', async () => {
    const throttle = new LoginThrottle(loginLimitStore(dataSource));
    for (const name of ['a\u0000b', 'x'.repeat(1_000_000), '\uD800']) {
      await failTimes(throttle, name, '10.0.5.1', 5);
      expect(await throttle.waitFor(name, '10.0.5.1')).toMatchObject({ scope: 'USER' });
    }
    const [{ longest }] = (await dataSource.query('SELECT max(length(key))::int AS longest FROM login_limits')) as Array<{ longest: number }>;
    expect(longest).toBeLessThan(100);
  });
});
