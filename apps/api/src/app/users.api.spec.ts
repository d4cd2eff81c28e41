import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, ADMIN_PASSWORD, startApiHarness } from '../testing/api-test-harness';

/**
 * User management and sessions against two replicas of the API on one database (the real
 * Postgres server, events through LISTEN/NOTIFY), as a deployment with two pods runs them.
 */
describe('users and sessions', () => {
  let replicaA: ApiHarness;
  let replicaB: ApiHarness;
  let admin: string;

  const create = async (username: string, role: 'VIEWER' | 'OPERATOR' | 'ADMIN') => {
    const created = await replicaA.gql('mutation($i: CreateUserInput!) { createUser(input: $i) { id } }', { i: { username, password: `${username}-password-1`, role } }, admin);
    expect(created.errors).toBeUndefined();
    return replicaA.login(username, `${username}-password-1`);
  };
  const code = (result: { errors?: Array<{ extensions?: Record<string, unknown> }> }) => result.errors?.[0]?.extensions?.['code'];
  const whoAmI = async (harness: ApiHarness, token: string) => {
    const result = await harness.gql<{ me: { username: string; role: string } }>('{ me { username role } }', {}, token);
    return result.data?.me ?? code(result);
  };
  const auditOf = async (action: string) =>
    (await replicaA.api.dataSource.query('SELECT actor, target_type, target_id, result, detail FROM audit_log WHERE action = $1 ORDER BY id', [action])) as Array<{
      actor: string;
      target_type: string;
      target_id: string | null;
      result: string;
      detail: { code?: string };
    }>;

  beforeAll(async () => {
    replicaA = await startApiHarness();
    replicaB = await startApiHarness({}, { database: replicaA.database });
    admin = await replicaA.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => {
    await replicaB?.stop();
    await replicaA?.stop();
  });

  it('changes a role, disables, enables and deletes a user, each taking effect on the next request, on either replica', async () => {
    const alice = await create('alice', 'OPERATOR');
    expect(await whoAmI(replicaB, alice)).toEqual({ username: 'alice', role: 'OPERATOR' });

    expect((await replicaA.gql('mutation { setUserRole(username: "alice", role: VIEWER) { username role } }', {}, admin)).data).toEqual({ setUserRole: { username: 'alice', role: 'VIEWER' } });
    await expect.poll(() => whoAmI(replicaB, alice), { timeout: 2_000, interval: 20 }).toEqual({ username: 'alice', role: 'VIEWER' });
    expect(code(await replicaB.gql('mutation { setCsrAutoApprove(clusterId: "6f1c1d7e-0000-4000-8000-000000000000", enabled: true) { id } }', {}, alice))).toBe('FORBIDDEN');

    const disabled = await replicaA.gql<{ disableUser: { disabledAt: string | null } }>('mutation { disableUser(username: "alice") { disabledAt } }', {}, admin);
    expect(disabled.data?.disableUser.disabledAt).toMatch(/^\d{4}-/);
    // Its sessions ended: refused at once here, and on the other replica as soon as it hears of it.
    expect(await whoAmI(replicaA, alice)).toBe('UNAUTHENTICATED');
    await expect.poll(() => whoAmI(replicaB, alice), { timeout: 2_000, interval: 20 }).toBe('UNAUTHENTICATED');
    const refused = await replicaB.gql('mutation { login(username: "alice", password: "alice-password-1") { token } }');
    expect(refused.errors?.[0]).toMatchObject({ message: 'user "alice" is disabled; an administrator can enable it again', extensions: { code: 'UNAUTHENTICATED' } });

    expect((await replicaA.gql('mutation { enableUser(username: "alice") { disabledAt } }', {}, admin)).data).toEqual({ enableUser: { disabledAt: null } });
    const again = await replicaB.login('alice', 'alice-password-1');
    expect(await whoAmI(replicaA, again)).toEqual({ username: 'alice', role: 'VIEWER' });

    expect((await replicaA.gql('mutation { deleteUser(username: "alice") { username } }', {}, admin)).data).toEqual({ deleteUser: { username: 'alice' } });
    await expect.poll(() => whoAmI(replicaB, again), { timeout: 2_000, interval: 20 }).toBe('UNAUTHENTICATED');
    await expect(replicaB.login('alice', 'alice-password-1')).rejects.toThrow(/wrong user name or password/);
    const users = await replicaA.gql<{ users: Array<{ username: string }> }>('{ users { username } }', {}, admin);
    expect(users.data?.users.map((user) => user.username)).not.toContain('alice');
    expect(code(await replicaA.gql('mutation { disableUser(username: "alice") { id } }', {}, admin))).toBe('NOT_FOUND');
  });

  it('never leaves the service without an active admin, not even by an admin demoting, disabling or deleting themselves', async () => {
    const lastAdminRefusals = [
      'mutation { setUserRole(username: "admin", role: OPERATOR) { role } }',
      'mutation { disableUser(username: "admin") { id } }',
      'mutation { deleteUser(username: "admin") { id } }',
    ];
    for (const mutation of lastAdminRefusals) {
      const result = await replicaA.gql(mutation, {}, admin);
      expect(result.errors?.[0]).toMatchObject({ extensions: { code: 'FAILED_PRECONDITION', reason: 'LAST_ADMIN' } });
      expect(result.errors?.[0]?.message).toMatch(/admin is the last active ADMIN; make another user ADMIN first$/);
    }
    expect(await whoAmI(replicaA, admin)).toEqual({ username: 'admin', role: 'ADMIN' });

    // A disabled admin does not count.
    const dormant = await create('dormant', 'ADMIN');
    expect((await replicaA.gql('mutation { disableUser(username: "dormant") { id } }', {}, dormant)).errors).toBeUndefined();
    expect(code(await replicaA.gql('mutation { setUserRole(username: "admin", role: VIEWER) { role } }', {}, admin))).toBe('FAILED_PRECONDITION');

    // With a second active admin, either may step down, but not both.
    const boss = await create('boss', 'ADMIN');
    const [one, other] = await Promise.all([
      replicaA.gql('mutation { setUserRole(username: "boss", role: VIEWER) { role } }', {}, admin),
      replicaB.gql('mutation { setUserRole(username: "admin", role: VIEWER) { role } }', {}, boss),
    ]);
    // One succeeds. The other is refused as the last admin's demotion, or, when the first one's
    // commit lands before its authorization check, because its caller is no longer an admin.
    const codes = [code(one), code(other)];
    expect(codes.filter((answer) => answer === undefined)).toHaveLength(1);
    expect(['FAILED_PRECONDITION', 'FORBIDDEN']).toContain(codes.find((answer) => answer !== undefined));
    const admins = (await replicaA.api.dataSource.query("SELECT username FROM users WHERE role = 'ADMIN' AND disabled_at IS NULL")) as Array<{ username: string }>;
    expect(admins).toHaveLength(1);
    const survivor = admins[0]?.username === 'admin' ? admin : boss;
    // The survivor puts things back for the tests after this one.
    expect((await replicaA.gql('mutation { setUserRole(username: "admin", role: ADMIN) { role } }', {}, survivor)).errors).toBeUndefined();
    expect((await replicaA.gql('mutation { deleteUser(username: "boss") { username } }', {}, admin)).errors).toBeUndefined();
  });

  it('lets only admins manage users', async () => {
    const viewer = await create('nosy', 'VIEWER');
    for (const mutation of [
      'mutation { setUserRole(username: "nosy", role: ADMIN) { role } }',
      'mutation { disableUser(username: "admin") { id } }',
      'mutation { enableUser(username: "nosy") { id } }',
      'mutation { deleteUser(username: "admin") { id } }',
      'mutation { revokeAllSessions(username: "admin") { id } }',
    ]) {
      expect(code(await replicaB.gql(mutation, {}, viewer))).toBe('FORBIDDEN');
    }
    expect(code(await replicaB.gql('{ sessions(username: "admin") { id } }', {}, viewer))).toBe('FORBIDDEN');
    expect(await whoAmI(replicaA, viewer)).toEqual({ username: 'nosy', role: 'VIEWER' });
  });

  it('lists sessions with where they came from, and signs out one of them on every replica at once', async () => {
    await create('carol', 'VIEWER');
    const laptop = await replicaA.login('carol', 'carol-password-1');
    const phone = await replicaB.login('carol', 'carol-password-1');
    type Listed = { id: string; current: boolean; sourceAddress: string; userAgent: string | null; lastUsedAt: string; revokedAt: string | null };
    const listed = await replicaB.gql<{ mySessions: Listed[] }>('{ mySessions { id current sourceAddress userAgent lastUsedAt revokedAt } }', {}, laptop);
    // Three: the one `create` opened, the laptop and the phone.
    expect(listed.data?.mySessions).toHaveLength(3);
    expect(listed.data?.mySessions.filter((session) => session.current)).toHaveLength(1);
    expect(listed.data?.mySessions.every((session) => session.sourceAddress === '127.0.0.1' && session.userAgent === 'node' && session.revokedAt === null)).toBe(true);
    const laptopSession = listed.data?.mySessions.find((session) => session.current)?.id ?? '';

    // Someone else's session does not exist for a non-admin.
    const other = await create('mallory', 'VIEWER');
    expect(code(await replicaA.gql('mutation($id: ID!) { revokeSession(id: $id) { id } }', { id: laptopSession }, other))).toBe('NOT_FOUND');
    expect(code(await replicaA.gql('mutation { revokeSession(id: "not-a-session") { id } }', {}, other))).toBe('NOT_FOUND');

    // The admin sees carol's sessions and signs the laptop out on replica A; replica B, which has it cached, refuses it too.
    expect(await whoAmI(replicaB, laptop)).toEqual({ username: 'carol', role: 'VIEWER' });
    const asAdmin = await replicaA.gql<{ sessions: Listed[] }>('{ sessions(username: "carol") { id current } }', {}, admin);
    expect(asAdmin.data?.sessions.map((session) => session.id)).toContain(laptopSession);
    expect(asAdmin.data?.sessions.some((session) => session.current)).toBe(false);
    const revoked = await replicaA.gql<{ revokeSession: Listed }>('mutation($id: ID!) { revokeSession(id: $id) { id revokedAt } }', { id: laptopSession }, admin);
    expect(revoked.data?.revokeSession.revokedAt).toMatch(/^\d{4}-/);
    const started = Date.now();
    await expect.poll(() => whoAmI(replicaB, laptop), { timeout: 2_000, interval: 10 }).toBe('UNAUTHENTICATED');
    // The announcement did it, well before the cache would have expired (5 s).
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await whoAmI(replicaA, laptop)).toBe('UNAUTHENTICATED');
    expect(await whoAmI(replicaB, phone)).toEqual({ username: 'carol', role: 'VIEWER' });
    expect(code(await replicaB.gql('mutation($id: ID!) { revokeSession(id: $id) { id } }', { id: laptopSession }, admin))).toBe('NOT_FOUND');

    // Signing out every session of carol, as an admin.
    expect((await replicaB.gql('mutation { revokeAllSessions(username: "carol") { username } }', {}, admin)).data).toEqual({ revokeAllSessions: { username: 'carol' } });
    await expect.poll(() => whoAmI(replicaA, phone), { timeout: 2_000, interval: 10 }).toBe('UNAUTHENTICATED');
    expect((await replicaA.gql<{ sessions: Listed[] }>('{ sessions(username: "carol") { id } }', {}, admin)).data?.sessions).toEqual([]);
    const rows = (await replicaA.api.dataSource.query(
      "SELECT revoked_reason FROM user_sessions s JOIN users u ON u.id = s.user_id WHERE u.username = 'carol' ORDER BY revoked_reason",
    )) as Array<{ revoked_reason: string }>;
    expect(rows.map((row) => row.revoked_reason)).toEqual(['signed out by an administrator', 'signed out by an administrator', 'signed out by an administrator']);
  });

  it('records every change in the audit log under the name of the user it concerns', async () => {
    expect(await auditOf('setUserRole')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ actor: 'admin', target_type: 'User', target_id: 'alice', result: 'SUCCESS' }),
        expect.objectContaining({ actor: 'admin', target_id: 'admin', result: 'FAILURE', detail: expect.objectContaining({ code: 'FAILED_PRECONDITION' }) }),
        expect.objectContaining({ actor: 'nosy', target_id: 'nosy', result: 'DENIED', detail: expect.objectContaining({ code: 'FORBIDDEN' }) }),
      ]),
    );
    for (const action of ['disableUser', 'enableUser', 'deleteUser']) {
      expect(await auditOf(action)).toEqual(expect.arrayContaining([expect.objectContaining({ actor: 'admin', target_type: 'User', target_id: 'alice', result: 'SUCCESS' })]));
    }
    expect(await auditOf('disableUser')).toEqual(expect.arrayContaining([expect.objectContaining({ actor: 'dormant', target_id: 'dormant', result: 'SUCCESS' })]));
    expect(await auditOf('revokeSession')).toEqual(expect.arrayContaining([expect.objectContaining({ actor: 'admin', target_type: 'UserSession', result: 'SUCCESS' })]));
    expect(await auditOf('revokeAllSessions')).toEqual(expect.arrayContaining([expect.objectContaining({ actor: 'admin', target_type: 'User', target_id: 'carol', result: 'SUCCESS' })]));
    const changes = (await replicaA.api.dataSource.query("SELECT detail FROM audit_log WHERE action = 'changePassword' OR action = 'login'")) as Array<{ detail: unknown }>;
    expect(JSON.stringify(changes)).not.toContain('-password-1');
  });
});
