import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, E2E_ADMIN_PASSWORD, type GraphqlAnswer, graphqlFrom, startApiProcess } from '../support/api-process';

const LOGIN = 'mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }';
type Login = { login: { token: string } };
const codeOf = (answer: GraphqlAnswer<Login>) => (answer.data?.login ? 'OK' : String(answer.errors?.[0]?.extensions?.['code']));

/** A counter or gauge from /metrics, summed over its labels. */
async function metric(api: ApiProcess, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}${labels ? `{${labels}}` : ''} `) || (!labels && line.startsWith(`${name}{`)))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/**
 * Two built API processes on one Postgres database, as two replicas behind a load balancer.
 * Clients sit at different loopback addresses (the test binds each connection to its own
 * 127.x.y.z), which the API sees as their source addresses.
 */
describe('sign-in throttling shared by two API processes', () => {
  let first: ApiProcess;
  let second: ApiProcess;

  beforeAll(async () => {
    const env = { PASSWORD_CHECKS_AT_ONCE: '2', LOG_LEVEL: 'info' };
    first = await startApiProcess({ env });
    // Started once the first has migrated the database.
    second = await startApiProcess({ env, database: first.database ?? undefined });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('100 wrong passwords for admin from one address, spread over both processes, do not stop admin signing in from another', async () => {
    const codes: string[] = [];
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const api = attempt % 2 === 0 ? first : second;
      codes.push(codeOf(await graphqlFrom<Login>(api.url, '127.0.0.2', LOGIN, { u: 'admin', p: `wrong-password-${attempt}` })));
    }
    for (const api of [first, second]) {
      expect(codeOf(await graphqlFrom<Login>(api.url, '127.0.0.3', LOGIN, { u: 'admin', p: E2E_ADMIN_PASSWORD }))).toBe('OK');
    }
    // Five are checked; from then on the pair is refused before any check, by whichever process gets the attempt.
    expect(codes.slice(0, 5)).toEqual(Array(5).fill('UNAUTHENTICATED'));
    expect(new Set(codes.slice(5))).toEqual(new Set(['LOGIN_THROTTLED']));
    expect((await metric(first, 'ccos_login_attempts_total', 'outcome="WRONG_PASSWORD"')) + (await metric(second, 'ccos_login_attempts_total', 'outcome="WRONG_PASSWORD"'))).toBe(5);

    for (const api of [first, second]) {
      // The guessing address waits even with the right password.
      const refused = await graphqlFrom<Login>(api.url, '127.0.0.2', LOGIN, { u: 'admin', p: E2E_ADMIN_PASSWORD });
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'LOGIN_THROTTLED', scope: 'USER' });
      expect(refused.errors?.[0]?.message).toMatch(/^too many failed sign-ins for this user from your address; try again in \d+ s$/);
      expect(Number(refused.errors?.[0]?.extensions?.['retryAfterSeconds'])).toBeGreaterThan(0);
    }
  });

  it('gives one address a budget over all user names, on both processes together', async () => {
    const codes: string[] = [];
    for (let name = 0; name < 40; name += 1) {
      codes.push(codeOf(await graphqlFrom<Login>((name % 2 === 0 ? first : second).url, '127.0.0.4', LOGIN, { u: `someone${name}`, p: 'wrong-password' })));
    }
    expect(codes.slice(0, 30)).toEqual(Array(30).fill('UNAUTHENTICATED'));
    expect(new Set(codes.slice(30))).toEqual(new Set(['LOGIN_THROTTLED']));
    const refused = await graphqlFrom<Login>(second.url, '127.0.0.4', LOGIN, { u: 'admin', p: E2E_ADMIN_PASSWORD });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'LOGIN_THROTTLED', scope: 'ADDRESS' });
    expect(codeOf(await graphqlFrom<Login>(second.url, '127.0.0.5', LOGIN, { u: 'someone0', p: 'wrong-password' }))).toBe('UNAUTHENTICATED');
  });

  it('checks at most PASSWORD_CHECKS_AT_ONCE passwords under a burst of 200, answers the rest at once, and still lets admin in', async () => {
    expect(codeOf(await graphqlFrom<Login>(second.url, '127.0.0.6', LOGIN, { u: 'admin', p: E2E_ADMIN_PASSWORD }))).toBe('OK');
    const burst = Promise.all(Array.from({ length: 200 }, (_, index) => graphqlFrom<Login>(first.url, `127.0.1.${index + 1}`, LOGIN, { u: `burst${index}`, p: 'wrong-password' })));
    // From the address admin signed in from before (on either process): it goes ahead of the guesses.
    const admin = await graphqlFrom<Login>(first.url, '127.0.0.6', LOGIN, { u: 'admin', p: E2E_ADMIN_PASSWORD });
    const answers = await burst;
    expect(codeOf(admin), JSON.stringify(admin.errors)).toBe('OK');
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const codes = answers.map(codeOf);
    expect(new Set(codes)).toEqual(new Set(['UNAUTHENTICATED', 'LOGIN_BUSY']));
    const busy = answers.find((answer) => codeOf(answer) === 'LOGIN_BUSY');
    expect(busy?.errors?.[0]).toMatchObject({ message: 'too many sign-in attempts in progress; try again in 1 s', extensions: { code: 'LOGIN_BUSY', retryAfterSeconds: 1 } });
    expect(await metric(first, 'ccos_password_checks_peak')).toBe(2);
    expect(first.output()).not.toMatch(/"level":50/);
  });
});
