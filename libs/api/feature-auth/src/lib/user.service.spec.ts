import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, UserSessionStore, UserStore, loginLimitStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { appErrorOf } from '@ccos/api/util-graphql/testing';
import { DEFAULT_LOGIN_LIMITS, LoginThrottle } from './login-throttle';
import { PasswordCheckSlots } from './password-check-slots';
import { SessionTokens } from './session-tokens';
import { DEFAULT_SESSION_LIMITS, SessionService } from './session.service';
import { type LoginOutcome, UserService } from './user.service';

/** On the real Postgres: the store's locks decide the races, the throttle's counters live there too. */
describe('user service', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let users: UserService;
  let sessions: SessionService;
  const outcomes: LoginOutcome[] = [];
  const origin = (address = '10.2.0.1') => ({ address, userAgent: 'spec' });

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 4 });
    sessions = new SessionService(new UserSessionStore(dataSource), new SessionTokens(new Uint8Array(32).fill(3), 3600), createInProcessEventBus(), DEFAULT_SESSION_LIMITS);
    users = new UserService(new UserStore(dataSource), {
      sessions,
      throttle: new LoginThrottle(loginLimitStore(dataSource), { ...DEFAULT_LOGIN_LIMITS, freeFailures: 2 }),
      slots: new PasswordCheckSlots(),
      onLogin: (outcome) => outcomes.push(outcome),
    });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });


  /** What the client gets: the code and every extension (messageCode, field, reason …). */
  const refused = async (work: Promise<unknown>) => (await appErrorOf(work)).extensions;

  it('creates the first admin once, with a generated password it returns, and never again', async () => {
    const first = await users.ensureInitialAdmin(undefined);
    expect(first?.username).toBe('admin');
    expect(first?.generatedPassword).toMatch(/^[\w-]{24}$/);
    expect(await users.ensureInitialAdmin('another')).toBeNull();
    const signedIn = await users.login('admin', first?.generatedPassword ?? '', origin());
    expect(signedIn.user.role).toBe('ADMIN');
    expect(await refused(users.create('admin', 'x'.repeat(12), 'VIEWER'))).toMatchObject({ code: 'CONFLICT', field: 'username', problemCode: 'user.nameTaken' });
  });

  it('lets exactly one of two admins demoting each other at once succeed, and keeps the last one whatever is tried', async () => {
    await users.create('ada', 'ada-password-1', 'ADMIN');
    await users.create('bob', 'bob-password-1', 'ADMIN');
    // `admin` from the first case is an admin too: disable it so ada and bob are the only active ones.
    await users.disable('admin');
    const results = await Promise.allSettled([users.setRole('ada', 'VIEWER'), users.setRole('bob', 'VIEWER')]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const loser = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(loser.reason).toMatchObject({ code: 'FAILED_PRECONDITION', extensions: { reason: 'LAST_ADMIN', messageCode: 'user.lastAdmin' } });
    const lastAdmin = (await users.list()).filter((user) => user.role === 'ADMIN' && !user.disabledAt);
    expect(lastAdmin).toHaveLength(1);
    const name = lastAdmin[0]?.username ?? '';
    for (const attempt of [() => users.disable(name), () => users.delete(name), () => users.setRole(name, 'OPERATOR')]) {
      expect(await refused(attempt())).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'LAST_ADMIN' });
    }
    // A disabled admin is no admin in charge: enabling `admin` again lets the other step down.
    await users.enable('admin');
    expect((await users.setRole(name, 'OPERATOR')).role).toBe('OPERATOR');
  });

  it('refuses a wrong password and an unknown user alike, counts failures, then throttles the pair but not another address', async () => {
    await users.create('carol', 'carol-password-1', 'VIEWER');
    outcomes.length = 0;
    const wrong = await refused(users.login('carol', 'not-it', origin('10.2.0.9')));
    const unknown = await refused(users.login('nobody', 'not-it', origin('10.2.0.8')));
    expect(wrong).toMatchObject({ code: 'UNAUTHENTICATED', messageCode: 'user.wrongPassword' });
    expect(unknown).toEqual(wrong);
    await refused(users.login('carol', 'not-it', origin('10.2.0.9')));
    // Past the two free failures the right password waits too, from that address only.
    expect(await refused(users.login('carol', 'carol-password-1', origin('10.2.0.9')))).toMatchObject({ code: 'LOGIN_THROTTLED', scope: 'USER', retryAfterSeconds: expect.any(Number) });
    expect((await users.login('carol', 'carol-password-1', origin('10.2.0.10'))).user.username).toBe('carol');
    expect(outcomes).toEqual(['WRONG_PASSWORD', 'WRONG_PASSWORD', 'WRONG_PASSWORD', 'THROTTLED', 'SUCCESS']);
  });

  it('refuses a disabled user with its right password and ends its sessions at once; enabling lets it in again', async () => {
    await users.create('dave', 'dave-password-1', 'OPERATOR');
    const { token } = await users.login('dave', 'dave-password-1', origin());
    expect(await users.authenticate(token)).toMatchObject({ username: 'dave', role: 'OPERATOR' });
    await users.disable('dave');
    expect(await users.authenticate(token)).toBeNull();
    expect(await refused(users.login('dave', 'dave-password-1', origin()))).toMatchObject({ code: 'UNAUTHENTICATED', messageCode: 'user.disabled' });
    await users.enable('dave');
    expect((await users.login('dave', 'dave-password-1', origin())).user.disabledAt).toBeNull();
  });

  it("changes a password only with the current one, keeping the caller's session and ending the others", async () => {
    await users.create('erin', 'erin-password-1', 'VIEWER');
    const here = await users.login('erin', 'erin-password-1', origin());
    const elsewhere = await users.login('erin', 'erin-password-1', origin('10.2.0.20'));
    const caller = await users.authenticate(here.token);
    if (!caller) {throw new Error('the session just opened must authenticate');}
    expect(await refused(users.changePassword(caller, 'wrong', 'erin-password-2', origin()))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'currentPassword' });
    expect(await users.authenticate(elsewhere.token)).not.toBeNull();
    await users.changePassword(caller, 'erin-password-1', 'erin-password-2', origin());
    expect(await users.authenticate(here.token)).not.toBeNull();
    expect(await users.authenticate(elsewhere.token)).toBeNull();
    expect(await refused(users.login('erin', 'erin-password-1', origin()))).toMatchObject({ messageCode: 'user.wrongPassword' });
    expect((await users.login('erin', 'erin-password-2', origin())).user.username).toBe('erin');
  });

  it('deletes a user with its sessions, and answers NOT_FOUND for it and for a name no user can have', async () => {
    await users.create('fred', 'fred-password-1', 'VIEWER');
    const { token } = await users.login('fred', 'fred-password-1', origin());
    await users.delete('fred');
    expect(await users.authenticate(token)).toBeNull();
    expect(await refused(users.get('fred'))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await refused(users.get('fred\u0000; DROP TABLE users'))).toMatchObject({ code: 'NOT_FOUND' });
  });
});
