import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { QUERY_LIMITS } from '@ccos/api/util-graphql';
import { SERVICE_OPERATION_NAMES } from '@ccos/shared/api-schema';
import { type ApiHarness, type GraphQLResponse, startApiHarness } from '../testing/api-test-harness';
import { MAX_JSON_DEPTH, WEBSOCKET_LIMITS } from './http-server';

/**
 * The API's edge as a client meets it: documents that cost too much to parse, validate or run,
 * introspection, WebSocket bounds, input that cannot be stored, secrets in the audit log, and
 * actions whose audit entry cannot be written.
 */
describe('the API edge', () => {
  let harness: ApiHarness;
  let admin: string;
  let viewer: string;

  beforeAll(async () => {
    harness = await startApiHarness();
    admin = await harness.tokenFor('ADMIN');
    viewer = await harness.tokenFor('VIEWER');
  });
  afterAll(async () => {
    await harness?.stop();
  });

  const post = async (body: unknown, token: string | null = null) => {
    harness.secrets.noteRequest(body);
    const started = performance.now();
    const response = await fetch(`${harness.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    harness.secrets.noteResponse(text);
    return { status: response.status, body: JSON.parse(text) as GraphQLResponse, ms: performance.now() - started };
  };

  describe('documents', () => {
    it('validates 23 nested fragments in milliseconds, and /healthz does not wait', async () => {
      const fragments = Array.from({ length: 23 }, (_, i) => (i === 22 ? `fragment F${i} on User { id }` : `fragment F${i} on User { ...F${i + 1} ...F${i + 1} }`));
      const slow = post({ query: `{ me { ...F0 } } ${fragments.join(' ')}` }, viewer);
      const health = (async () => {
        const started = performance.now();
        await fetch(`${harness.url}/healthz`);
        return performance.now() - started;
      })();
      const [answer, healthMs] = await Promise.all([slow, health]);
      expect(answer.body).toMatchObject({ data: { me: { id: expect.any(String) } } });
      expect(answer.ms).toBeLessThan(1000);
      expect(healthMs).toBeLessThan(1000);
    });

    it('refuses 20,000 repeated fields at parse time, cheaply', async () => {
      const answer = await post({ query: `{ me { ${'id '.repeat(20_000)}} }` }, viewer);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
      // graphql's own wording has "more that".
      expect(answer.body.errors?.[0]?.message).toMatch(new RegExp(`Document contains more th(an|at) ${QUERY_LIMITS.maxTokens} tokens`));
      expect(answer.ms).toBeLessThan(1000);
    });

    it('refuses an operation whose list fields multiply beyond the cost limit, and counts first', async () => {
      const nested = await post({ query: 'query($c: ID!) { nodes(clusterId: $c) { installRuns { events { seq step status message detail occurredAt } steps { step } } } }', variables: { c: 'x' } }, viewer);
      expect(nested.status).toBe(400);
      expect(nested.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', maxCost: QUERY_LIMITS.maxCost } });
      const huge = await post({ query: 'query($n: Int!) { auditLog(first: $n) { entries { id actor action targetType targetId result code detail at } } }', variables: { n: 1_000_000 } }, admin);
      expect(huge.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      const page = await post({ query: 'query($n: Int!) { auditLog(first: $n) { entries { id actor action } } }', variables: { n: 200 } }, admin);
      expect(page.body.errors).toBeUndefined();
    });

    it('answers introspection to signed-in users only', async () => {
      const anonymous = await post({ query: '{ __schema { queryType { name } } }' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.errors?.[0]).toMatchObject({ message: 'introspection needs a signed-in user: sign in and send the bearer token', extensions: { code: 'UNAUTHENTICATED' } });
      expect(anonymous.body.errors?.[0]?.extensions?.['http']).toBeUndefined();
      const hidden = await post({ query: 'query { ...Q } fragment Q on Query { __type(name: "Mutation") { fields { name } } }' });
      expect(hidden.status).toBe(401);
      const signedIn = await post({ query: '{ __schema { queryType { name } } }' }, viewer);
      expect(signedIn.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
      // __typename is no introspection of the schema.
      expect((await post({ query: '{ __typename }' })).body).toEqual({ data: { __typename: 'Query' } });
    });

    it('answers a batch of operations with a refusal, not by running them', async () => {
      const batch = await post([{ query: '{ me { id } }' }, { query: '{ me { id } }' }], viewer);
      expect(batch.status).toBe(400);
    });
  });

  describe('security headers', () => {
    /** The headers of GET `path` over the port's TLS, trusting the service's own CA. */
    const overTls = (path: string) =>
      new Promise<IncomingHttpHeaders>((resolve, reject) => {
        const ca = harness.api.tls.caCertificates() ?? '';
        request(`${harness.api.httpsUrl}${path}`, { ca, agent: false, checkServerIdentity: () => undefined }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.headers));
        })
          .on('error', reject)
          .end();
      });

    it.each(['/', '/nodes/some-node', '/healthz', '/graphql?query=%7B__typename%7D', '/no-such-file.js'])(
      'GET %s: a CSP that no page may frame, nosniff, and HSTS over HTTPS only',
      async (path) => {
        const plain = await fetch(`${harness.url}${path}`, { headers: { 'apollo-require-preflight': 'true' } });
        await plain.arrayBuffer();
        const policy = plain.headers.get('content-security-policy') ?? '';
        expect(policy).toContain("frame-ancestors 'none'");
        expect(policy).toContain("script-src 'self'");
        expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
        expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
        expect(plain.headers.get('strict-transport-security')).toBeNull();

        const secure = await overTls(path);
        expect(secure['strict-transport-security']).toBe('max-age=31536000');
        expect(secure['content-security-policy']).toContain("frame-ancestors 'none'");
        expect(secure['x-content-type-options']).toBe('nosniff');
      },
    );

    it('answers a refused POST with the headers too', async () => {
      const response = await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    });
  });

  describe('bodies', () => {
    const raw = async (body: string, token: string | null = null) => {
      const started = performance.now();
      const response = await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body });
      return { status: response.status, body: (await response.json()) as GraphQLResponse, ms: performance.now() - started };
    };
    /** A valid request of `bytes` bytes: a query padded with a comment. */
    const padded = (bytes: number) => {
      const head = JSON.stringify({ query: '{ __typename } #' });
      return `${head.slice(0, -2)}${'x'.repeat(bytes - head.length)}"}`;
    };

    it('refuses a 1 MiB body without a sign-in (or with a made-up token) with 413 and says why; a signed-in user may send it', async () => {
      const body = padded(1024 * 1024 - 64);
      for (const token of [null, 'not-a-session-token']) {
        const anonymous = await raw(body, token);
        expect(anonymous.status).toBe(413);
        expect(anonymous.body.errors?.[0]).toMatchObject({
          message: 'request body is too large for a request without a sign-in: at most 65536 bytes; sign in for larger requests',
          extensions: { code: 'PAYLOAD_TOO_LARGE', messageCode: 'error.anonymousBodyTooLarge', messageParams: { max: 65536 } },
        });
      }
      expect((await raw(body, viewer)).body).toEqual({ data: { __typename: 'Query' } });
      expect((await raw(padded(60_000))).body).toEqual({ data: { __typename: 'Query' } });
    });

    it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels with 400 before parsing it, signed in or not`, async () => {
      const deep = (levels: number) => `{"query":"query($v: JSON) { __typename }","variables":{"v":${'['.repeat(levels)}${']'.repeat(levels)}}}`;
      for (const token of [null, viewer]) {
        const answer = await raw(deep(20_000), token);
        expect(answer.status).toBe(400);
        expect(answer.body.errors?.[0]).toMatchObject({ message: `the request body nests JSON more than ${MAX_JSON_DEPTH} levels deep`, extensions: { code: 'BAD_REQUEST', messageCode: 'error.jsonTooDeep' } });
      }
      // Brackets inside strings are text, not nesting.
      const inString = JSON.stringify({ query: `{ __typename } #${'[{'.repeat(200)}` });
      expect((await raw(inString)).body).toEqual({ data: { __typename: 'Query' } });
    });
  });

  describe('metrics', () => {
    // 4,000 requests: 121 s were measured on 2 cores at a load average of 20.
    it('label 4,000 anonymous operations with random long names as `other`: /metrics stays under 1 MB', async () => {
      const names = new Set<string>();
      const send = async (index: number) => {
        // A fresh valid GraphQL name of 400+ characters each time, in the document or only in operationName.
        const name = `Op_${randomBytes(200).toString('hex')}`;
        names.add(name);
        const body = index % 2 === 0 ? { query: `query ${name} { __typename }`, operationName: name } : { query: '{ __typename }', operationName: name };
        const response = await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        await response.arrayBuffer();
      };
      const lanes = Array.from({ length: 16 }, async (_, lane) => {
        for (let index = lane; index < 4000; index += 16) {
          await send(index);
        }
      });
      await Promise.all(lanes);
      await post({ query: 'query Me { me { id } }', operationName: 'Me' }, viewer);

      const response = await fetch(`${harness.url}/metrics`);
      const text = await response.text();
      expect(Buffer.byteLength(text)).toBeLessThan(1024 * 1024);
      const labelled = new Set([...text.matchAll(/[{,]operation="([^"]*)"/g)].map((match) => match[1]));
      expect([...labelled].filter((name) => name !== 'other' && !SERVICE_OPERATION_NAMES.has(name ?? ''))).toEqual([]);
      expect(labelled).toContain('other');
      expect(labelled).toContain('Me');
      const counted = [...text.matchAll(/^ccos_graphql_operations_total\{[^}]*operation="other"[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
      expect(counted).toBeGreaterThanOrEqual(4000);
      for (const name of [...names].slice(0, 50)) {
        expect(text).not.toContain(name);
      }
    }, 300_000);
  });

  describe('one WebSocket connection', () => {
    let client: Client;
    beforeAll(() => {
      client = createClient({ url: `${harness.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${viewer}` }, retryAttempts: 0, lazy: false });
    });
    afterAll(async () => {
      await client?.dispose();
    });

    /** The first thing an operation answers: a result, or its errors. */
    const first = (query: string, variables: Record<string, unknown> = {}) =>
      new Promise<{ data?: unknown; errors?: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }> }>((resolve) => {
        const stop = client.subscribe(
          { query, variables },
          {
            next: (value) => {
              resolve(value as never);
              stop();
            },
            error: (error) => resolve({ errors: Array.isArray(error) ? error : [{ message: String((error as Error).message ?? error) }] }),
            complete: () => undefined,
          },
        );
      });

    it('refuses mutations: they go over HTTP, where the audit and every limit apply', async () => {
      const answer = await first('mutation { logout }');
      expect(answer.errors?.[0]?.message).toBe('mutations are accepted over HTTP only (POST /graphql); the WebSocket carries subscriptions and queries');
      expect((await harness.gql('{ me { username } }', {}, viewer)).data).toEqual({ me: { username: 'viewer' } });
    });

    it('applies the token limit and the validation rules of HTTP', async () => {
      const huge = await first(`{ me { ${'id '.repeat(20_000)}} }`);
      expect(huge.errors?.[0]?.message).toMatch(new RegExp(`Document contains more th(an|at) ${QUERY_LIMITS.maxTokens} tokens`));
      const aliases = await first(`{ ${Array.from({ length: 70 }, (_, index) => `a${index}: me { id }`).join(' ')} }`);
      expect(aliases.errors?.[0]?.message).toBe('query uses more than 64 aliases');
      expect(await first('{ me { username } }')).toEqual({ data: { me: { username: 'viewer' } } });
    });

    it(`runs at most ${WEBSOCKET_LIMITS.maxOperations} subscriptions at once`, async () => {
      const stops: Array<() => void> = [];
      const refusals: string[] = [];
      for (let index = 0; index < WEBSOCKET_LIMITS.maxOperations + 5; index++) {
        stops.push(
          client.subscribe(
            { query: 'subscription($c: ID!) { nodeChanged(clusterId: $c) { nodeId } }', variables: { c: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}` } },
            { next: () => undefined, error: (error) => refusals.push(JSON.stringify(error)), complete: () => undefined },
          ),
        );
      }
      await expect.poll(() => refusals.length, { timeout: 5000 }).toBe(5);
      expect(refusals[0]).toContain(`at most ${WEBSOCKET_LIMITS.maxOperations} subscriptions at once on one connection`);
      stops.forEach((stop) => stop());
    });
  });

  describe('input that cannot be stored', () => {
    it('refuses a NUL in login’s user name with BAD_USER_INPUT naming the field, and audits the refusal', async () => {
      const answer = await harness.gql('mutation($u: String!) { login(username: $u, password: "whatever-password") { token } }', { u: 'adm\u0000in' });
      expect(answer.errors?.[0]).toMatchObject({ message: 'username contains a NUL character (U+0000), which cannot be stored', extensions: { code: 'BAD_USER_INPUT', field: 'username' } });
      const rows: Array<{ actor: string; result: string }> = await harness.api.dataSource.query(`SELECT actor, result FROM audit_log WHERE action = 'login' AND detail->>'code' = 'BAD_USER_INPUT'`);
      expect(rows).toEqual([{ actor: 'adm\\u0000in', result: 'FAILURE' }]);
      expect(harness.logs.join('\n')).not.toContain('could not write the audit log');
    });

    it.each([
      ['a NUL', 'pro\u0000d', 'input.name contains a NUL character (U+0000), which cannot be stored'],
      ['a lone surrogate', 'prod\ud800', 'input.name contains an unpaired UTF-16 surrogate (U+D800); send valid Unicode text'],
      ['an escape character', 'prod\u001b[2J', 'input.name contains the control character U+001B'],
    ])('refuses %s in a cluster name and registers nothing', async (_what, name, message) => {
      const answer = await harness.gql('mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }', { i: { name, apiServerUrl: 'https://198.18.0.9:6443', vip: '198.18.0.9', token: 'sa-token-value' } }, admin);
      expect(answer.errors?.[0]).toMatchObject({ message, extensions: { code: 'BAD_USER_INPUT', field: 'input.name' } });
      expect(await harness.api.dataSource.query('SELECT count(*)::int AS n FROM clusters')).toEqual([{ n: 0 }]);
    });
  });

  describe('the audit log', () => {
    it('never stores changePassword’s passwords, and auditLog never shows them', async () => {
      const operator = await harness.tokenFor('OPERATOR');
      const answer = await harness.gql('mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }', { c: 'current-pw-in-clear-1', n: 'new-password-in-clear-2' }, operator);
      expect(answer.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      const rows = await harness.api.dataSource.query(`SELECT detail FROM audit_log WHERE action = 'changePassword'`);
      expect(rows).toEqual([{ detail: { args: { currentPassword: '[redacted]', newPassword: '[redacted]' }, code: 'BAD_USER_INPUT' } }]);
      const trail = await harness.gql('{ auditLog(first: 200) { entries { actor action detail } } }', {}, admin);
      for (const haystack of [JSON.stringify(trail), JSON.stringify(answer), harness.logs.join('\n')]) {
        expect(haystack).not.toContain('current-pw-in-clear-1');
        expect(haystack).not.toContain('new-password-in-clear-2');
      }
    });

    it('refuses an action whose audit entry cannot be written, and does not do it', async () => {
      await harness.api.dataSource.query(`ALTER TABLE audit_log ADD CONSTRAINT refuse_cluster_entries CHECK (action <> 'registerCluster') NOT VALID`);
      try {
        const answer = await harness.gql('mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }', { i: { name: 'unaudited', apiServerUrl: 'https://198.18.0.9:6443', vip: '198.18.0.9', token: 'sa-token-value' } }, admin);
        expect(answer.errors?.[0]).toMatchObject({ message: 'the audit log cannot be written right now, so nothing was done; try again shortly', extensions: { code: 'UNAVAILABLE' } });
        expect(await harness.api.dataSource.query(`SELECT name FROM clusters WHERE name = 'unaudited'`)).toEqual([]);
      } finally {
        await harness.api.dataSource.query('ALTER TABLE audit_log DROP CONSTRAINT refuse_cluster_entries');
      }
    });
  });
});
