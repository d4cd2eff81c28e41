import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { formatServerText } from '@ccos/shared/messages';
import { type ApiHarness, ADMIN_PASSWORD, type GraphQLResponse, startApiHarness } from '../testing/api-test-harness';
import { type ApiServices, buildApiSchema, printApiSchema } from './schema';

const KUBECONFIG = `apiVersion: v1
kind: Config
current-context: admin@prod
contexts:
- name: admin@prod
  context: { cluster: prod, user: admin }
clusters:
- name: prod
  cluster: { server: "https://api.prod.example.com:6443", certificate-authority-data: "Q0EK" }
users:
- name: admin
  user: { token: "kube-admin-token-SECRET-4242" }
`;

const REGISTER = `mutation($input: RegisterClusterInput!) {
  registerCluster(input: $input) { id name apiServerUrl vip csrAutoApprove bootstrapStyle credentialKind }
}`;

function clusterInput(overrides: Record<string, unknown> = {}) {
  return { name: 'prod', apiServerUrl: 'https://api.prod.example.com:6443', vip: '198.18.0.2', kubeconfig: KUBECONFIG, ...overrides };
}

describe('installer service API', () => {
  let harness: ApiHarness;
  let admin: string;

  beforeAll(async () => {
    harness = await startApiHarness();
    admin = await harness.tokenFor('ADMIN');
  });
  afterAll(async () => {
    await harness?.stop();
  });

  describe('health, readiness and metrics', () => {
    it('answers /healthz and /readyz', async () => {
      expect(await (await fetch(`${harness.url}/healthz`)).json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${harness.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    });

    it('exposes process, HTTP and GraphQL metrics', async () => {
      await harness.gql('query Clusters { clusters { id } }', {}, admin);
      const text = await (await fetch(`${harness.url}/metrics`)).text();
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).toMatch(/ccos_http_requests_total\{method="POST",route="\/graphql",status="200"\} \d+/);
      expect(text).toMatch(/ccos_graphql_operations_total\{type="query",operation="Clusters",outcome="ok"\} \d+/);
      expect(text).toContain('ccos_graphql_operation_duration_seconds_bucket');
    });

    it('tags every response with a request id', async () => {
      const response = await fetch(`${harness.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
      expect(response.headers.get('x-request-id')).toBe('trace-123');
      const generated = await fetch(`${harness.url}/healthz`, { headers: { 'x-request-id': 'bad id; drop table' } });
      expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('clusters', () => {
    it('registers a cluster, lists it, reads it and toggles auto-approve', async () => {
      const registered = await harness.gql<{ registerCluster: { id: string } }>(REGISTER, { input: clusterInput({ csrAutoApprove: true }) }, admin);
      expect(registered.errors).toBeUndefined();
      expect(registered.data?.registerCluster).toMatchObject({
        name: 'prod', apiServerUrl: 'https://api.prod.example.com:6443', vip: '198.18.0.2', csrAutoApprove: true, bootstrapStyle: 'OPENSHIFT', credentialKind: 'KUBECONFIG',
      });
      const id = registered.data?.registerCluster.id;
      const listed = await harness.gql<{ clusters: Array<{ id: string; name: string }> }>('{ clusters { id name } }', {}, admin);
      expect(listed.data?.clusters).toEqual([{ id, name: 'prod' }]);
      const toggled = await harness.gql('mutation($id: ID!) { setCsrAutoApprove(clusterId: $id, enabled: false) { csrAutoApprove } }', { id }, admin);
      expect(toggled.data).toEqual({ setCsrAutoApprove: { csrAutoApprove: false } });
      const read = await harness.gql('query($id: ID!) { cluster(id: $id) { name csrAutoApprove autoApproveRenewals } }', { id }, admin);
      expect(read.data).toEqual({ cluster: { name: 'prod', csrAutoApprove: false, autoApproveRenewals: true } });
      // Renewals have a switch of their own: each argument changes only its own setting, and is audited.
      const renewalsOff = await harness.gql('mutation($id: ID!) { setCsrAutoApprove(clusterId: $id, renewals: false) { csrAutoApprove autoApproveRenewals } }', { id }, admin);
      expect(renewalsOff.data).toEqual({ setCsrAutoApprove: { csrAutoApprove: false, autoApproveRenewals: false } });
      const joinOn = await harness.gql('mutation($id: ID!) { setCsrAutoApprove(clusterId: $id, enabled: true) { csrAutoApprove autoApproveRenewals } }', { id }, admin);
      expect(joinOn.data).toEqual({ setCsrAutoApprove: { csrAutoApprove: true, autoApproveRenewals: false } });
      const neither = await harness.gql('mutation($id: ID!) { setCsrAutoApprove(clusterId: $id) { id } }', { id }, admin);
      expect(neither.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      const audited = await harness.api.dataSource.query(`SELECT detail FROM audit_log WHERE action = 'setCsrAutoApprove' AND result = 'SUCCESS' ORDER BY id`);
      expect(JSON.stringify(audited.at(-2))).toContain('"renewals":false');
    });

    it('registers a cluster with a token and CA instead of a kubeconfig', async () => {
      const ca = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n';
      const result = await harness.gql(REGISTER, { input: clusterInput({ name: 'lab', kubeconfig: null, token: 'sa-token-SECRET-777', caCert: ca, bootstrapStyle: 'KUBEADM' }) }, admin);
      expect(result.errors).toBeUndefined();
      expect(result.data?.['registerCluster']).toMatchObject({ credentialKind: 'TOKEN', bootstrapStyle: 'KUBEADM' });
    });

    it.each([
      ['a bad API server URL', { apiServerUrl: 'ftp://x' }, 'BAD_USER_INPUT', /^input\.apiServerUrl "ftp:\/\/x" is not an API server URL/, '“ftp://x”不是 API 服务器地址，应形如 https://api.example.com:6443'],
      ['a bad VIP', { vip: '10.0.0.300' }, 'BAD_USER_INPUT', /^input\.vip "10\.0\.0\.300" is not an IPv4 or IPv6 address/, '“10.0.0.300”不是 IPv4 或 IPv6 地址'],
      ['a bad name', { name: 'Prod East' }, 'BAD_USER_INPUT', /^input\.name "Prod East" is not a valid name/, '“Prod East”不是有效的名称（小写字母、数字和“-”，1–63 个字符）'],
      ['no credentials', { kubeconfig: null }, 'BAD_USER_INPUT', /^input\.kubeconfig or input\.token is required/, '需要 kubeconfig 或令牌：服务需要集群的凭据'],
      ['both credentials', { token: 'x' }, 'BAD_USER_INPUT', /^input\.token must not be given together with input\.kubeconfig/, '不能与 kubeconfig 同时填写，请二选一'],
      ['a kubeconfig without a user', { kubeconfig: KUBECONFIG.replace(/users:[\s\S]*/, 'users: []\n') }, 'BAD_USER_INPUT', /^input\.kubeconfig has no credentials for user "admin"/, '当前上下文的用户“admin”没有凭据（令牌或客户端证书）'],
      ['a kubeconfig that runs a command', { kubeconfig: KUBECONFIG.replace('user: { token: "kube-admin-token-SECRET-4242" }', 'user: { exec: { command: "/bin/sh", args: ["-c", "id"] } }') }, 'BAD_USER_INPUT', /^input\.kubeconfig user "admin" uses exec, which would run a command/, '用户“admin”使用了 exec，这会在安装服务上运行命令或读取文件；请改为嵌入令牌，或 client-certificate-data 和 client-key-data'],
      ['a kubeconfig that is not YAML', { kubeconfig: '{ [' }, 'BAD_USER_INPUT', /^input\.kubeconfig is not valid YAML/, '不是有效的 YAML（'],
      ['a CA that is not PEM', { kubeconfig: null, token: 't', caCert: 'hello' }, 'BAD_USER_INPUT', /^input\.caCert is not a PEM certificate/, '不是 PEM 格式的证书（-----BEGIN CERTIFICATE-----）'],
      ['a duplicate name', { name: 'prod' }, 'CONFLICT', /^input\.name "prod" is already registered/, '“prod”已被注册，请换一个名称'],
    ])('refuses %s with a coded error naming the field, and stores nothing', async (_case, overrides, code, message, chinese) => {
      const before = await harness.api.dataSource.query('SELECT count(*)::int AS n FROM clusters');
      const result = await harness.gql(REGISTER, { input: clusterInput(overrides) }, admin);
      expect(result.data).toBeNull();
      const error = result.errors?.[0];
      expect(error?.extensions?.['code']).toBe(code);
      expect(error?.message).toMatch(message);
      // The field's problem by its code: what the console shows beside the field, in the user's language and without API names.
      expect(error?.extensions?.['field']).toBe(String(error?.message).split(' ')[0]);
      const problem = formatServerText('zh-CN', error?.extensions?.['problemCode'] as string, error?.extensions?.['problemParams'], null);
      expect(problem).toContain(chinese);
      expect(problem).not.toMatch(/input\.|[A-Za-z]+Input/);
      expect(formatServerText('en', error?.extensions?.['messageCode'] as string, error?.extensions?.['messageParams'], null)).toBe(error?.message);
      expect(await harness.api.dataSource.query('SELECT count(*)::int AS n FROM clusters')).toEqual(before);
    });

    it('answers NOT_FOUND for a cluster that does not exist', async () => {
      for (const id of ['6f1c1d7e-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const result = await harness.gql('query($id: ID!) { cluster(id: $id) { id } }', { id }, admin);
        expect(result.errors?.[0]).toMatchObject({ message: `cluster ${id} does not exist`, extensions: { code: 'NOT_FOUND' } });
      }
    });
  });

  describe('credentials are write-only and encrypted at rest', () => {
    it('stores ciphertext and never returns or logs the secret', async () => {
      const rows: Array<{ credentials_sealed: string }> = await harness.api.dataSource.query('SELECT credentials_sealed FROM clusters');
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.credentials_sealed).toMatch(/^v1\./);
        expect(row.credentials_sealed).not.toContain('SECRET');
      }
      // Ask for everything a client can see.
      const introspected = await harness.gql<{ __type: { fields: Array<{ name: string }> } }>('{ __type(name: "Cluster") { fields { name } } }', {}, admin);
      const fields = introspected.data?.__type.fields.map((field) => field.name) ?? [];
      expect(fields).not.toEqual(expect.arrayContaining(['kubeconfig']));
      expect(fields.some((name) => /token|kubeconfig|caCert|credentials?$/i.test(name))).toBe(false);
      const everything = await harness.gql(`{ clusters { ${fields.join(' ')} } }`, {}, admin);
      const audit = await harness.api.dataSource.query('SELECT detail FROM audit_log');
      for (const haystack of [JSON.stringify(everything), harness.logs.join('\n'), JSON.stringify(audit)]) {
        expect(haystack).not.toContain('kube-admin-token-SECRET-4242');
        expect(haystack).not.toContain('sa-token-SECRET-777');
        expect(haystack).not.toContain(ADMIN_PASSWORD);
      }
      expect(JSON.stringify(audit)).toContain('[redacted]');
    });
  });

  describe('authentication and roles', () => {
    const operations: Array<{ name: string; needs: 'PUBLIC' | 'VIEWER' | 'OPERATOR' | 'ADMIN'; query: string; variables?: () => Record<string, unknown> }> = [
      { name: 'clusters', needs: 'VIEWER', query: '{ clusters { id } }' },
      { name: 'cluster', needs: 'VIEWER', query: 'query($id: ID!) { cluster(id: $id) { id } }', variables: () => ({ id: clusterId }) },
      { name: 'me', needs: 'VIEWER', query: '{ me { username role } }' },
      { name: 'changePassword', needs: 'VIEWER', query: 'mutation { changePassword(currentPassword: "wrong-password", newPassword: "another-password-1") }' },
      { name: 'users', needs: 'ADMIN', query: '{ users { username } }' },
      { name: 'auditLog', needs: 'ADMIN', query: '{ auditLog(first: 5) { hasMore entries { id actor action } } }' },
      { name: 'createUser', needs: 'ADMIN', query: 'mutation($u: String!) { createUser(input: { username: $u, password: "long-enough-password", role: VIEWER }) { id } }', variables: () => ({ u: `u${Math.random().toString(36).slice(2, 10)}` }) },
      { name: 'registerCluster', needs: 'ADMIN', query: REGISTER, variables: () => ({ input: clusterInput({ name: `c${Math.random().toString(36).slice(2, 10)}` }) }) },
      { name: 'setCsrAutoApprove', needs: 'ADMIN', query: 'mutation($id: ID!) { setCsrAutoApprove(clusterId: $id, enabled: true) { id } }', variables: () => ({ id: clusterId }) },
      { name: 'login', needs: 'PUBLIC', query: 'mutation { login(username: "admin", password: "wrong") { token } }' },
      { name: 'failedJobs', needs: 'ADMIN', query: '{ failedJobs { id task lastError } }' },
      { name: 'clusterRemediation', needs: 'VIEWER', query: 'query($id: ID!) { clusterRemediation(clusterId: $id) { policy { enabled } held { message } } }', variables: () => ({ id: clusterId }) },
      {
        name: 'setRemediationPolicy',
        needs: 'ADMIN',
        query: 'mutation($id: ID!) { setRemediationPolicy(clusterId: $id, input: { enabled: false, unhealthySeconds: 300, maxUnhealthy: 1 }) { policy { enabled } } }',
        variables: () => ({ id: clusterId }),
      },
      { name: 'retryJob', needs: 'ADMIN', query: 'mutation { retryJob(id: "4242") }' },
    ];
    const callers = ['anonymous', 'VIEWER', 'OPERATOR', 'ADMIN'] as const;
    const rank = { PUBLIC: -1, VIEWER: 0, OPERATOR: 1, ADMIN: 2 } as const;
    let clusterId = '';

    beforeAll(async () => {
      const list = await harness.gql<{ clusters: Array<{ id: string }> }>('{ clusters { id } }', {}, admin);
      clusterId = list.data?.clusters[0]?.id ?? '';
    });

    const cases = operations.flatMap((operation) => callers.map((caller) => ({ ...operation, caller })));
    it.each(cases)('$name as $caller', async ({ query, variables, needs, caller }) => {
      const token = caller === 'anonymous' ? null : await harness.tokenFor(caller);
      const result = await harness.gql(query, variables?.() ?? {}, token);
      const code = result.errors?.[0]?.extensions?.['code'];
      const callerRank = caller === 'anonymous' ? -1 : rank[caller];
      if (callerRank < rank[needs]) {
        expect(code).toBe(caller === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
        if (caller !== 'anonymous') {
          expect(result.errors?.[0]?.message).toBe(`this operation needs the ${needs} role; you are ${caller}`);
        }
      } else {
        // Allowed: the resolver ran (it may still refuse the arguments, e.g. a wrong current password).
        expect(code).not.toBe('FORBIDDEN');
        expect(result.errors?.[0]?.message ?? '').not.toContain('sign in first');
      }
    });

    it('refuses forged, expired and garbage tokens', async () => {
      const token = await harness.tokenFor('VIEWER');
      const [header, payload] = token.split('.');
      const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), role: 'ADMIN' })).toString('base64url');
      for (const bad of [`${header}.${forgedPayload}.${token.split('.')[2]}`, 'garbage', `${token}x`]) {
        const result = await harness.gql('{ clusters { id } }', {}, bad);
        expect(result.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
      }
    });

    it('signs out one session on logout, the others on revokeAllSessions, and the others on a password change', async () => {
      await harness.gql('mutation { createUser(input: { username: "leaver", password: "leaver-password-1", role: VIEWER }) { id } }', {}, admin);
      expect((await harness.gql('mutation { logout }')).errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
      const me = (token: string) => harness.gql('{ me { username } }', {}, token);
      const refused = async (token: string) => (await me(token)).errors?.[0]?.extensions?.['code'] === 'UNAUTHENTICATED';
      const laptop = await harness.login('leaver', 'leaver-password-1');
      const phone = await harness.login('leaver', 'leaver-password-1');
      expect((await harness.gql('mutation { logout }', {}, laptop)).data).toEqual({ logout: true });
      expect([await refused(laptop), await refused(phone)]).toEqual([true, false]);

      const tablet = await harness.login('leaver', 'leaver-password-1');
      expect((await harness.gql('mutation { revokeAllSessions(keepCurrent: true) { username } }', {}, tablet)).data).toEqual({ revokeAllSessions: { username: 'leaver' } });
      expect([await refused(phone), await refused(tablet)]).toEqual([true, false]);

      const desktop = await harness.login('leaver', 'leaver-password-1');
      const changed = await harness.gql('mutation { changePassword(currentPassword: "leaver-password-1", newPassword: "leaver-password-2") }', {}, tablet);
      expect(changed.data).toEqual({ changePassword: true });
      expect([await refused(desktop), await refused(tablet)]).toEqual([true, false]);
      await expect(harness.login('leaver', 'leaver-password-1')).rejects.toThrow(/wrong user name or password/);
      expect((await me(await harness.login('leaver', 'leaver-password-2'))).data).toEqual({ me: { username: 'leaver' } });

      expect((await harness.gql('mutation { revokeAllSessions { username } }', {}, tablet)).data).toEqual({ revokeAllSessions: { username: 'leaver' } });
      expect(await refused(tablet)).toBe(true);
    });

    it('slows wrong passwords for a user name from one address, with a coded error that says when to try again', async () => {
      await harness.gql('mutation { createUser(input: { username: "guesser", password: "guesser-password-1", role: VIEWER }) { id } }', {}, admin);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const wrong = await harness.gql('mutation { login(username: "guesser", password: "nope") { token } }');
        expect(wrong.errors?.[0]).toMatchObject({ message: 'wrong user name or password', extensions: { code: 'UNAUTHENTICATED' } });
      }
      const locked = await harness.gql('mutation { login(username: "guesser", password: "guesser-password-1") { token } }');
      expect(locked.errors?.[0]).toMatchObject({
        message: 'too many failed sign-ins for this user from your address; try again in 15 s',
        extensions: { code: 'LOGIN_THROTTLED', retryAfterSeconds: 15, scope: 'USER' },
      });
    });

    it('refuses a user name Postgres cannot store with BAD_USER_INPUT naming the field, as every argument', async () => {
      const result = await harness.gql('mutation($u: String!) { login(username: $u, password: "whatever-password") { token } }', { u: 'ad\u0000min' });
      expect(result.errors?.[0]).toMatchObject({ message: 'username contains a NUL character (U+0000), which cannot be stored', extensions: { code: 'BAD_USER_INPUT', field: 'username' } });
    });

    it('writes who did what to the audit log, including refusals', async () => {
      const rows: Array<{ actor: string; action: string; result: string; target_id: string | null }> = await harness.api.dataSource.query(
        'SELECT actor, action, result, target_id FROM audit_log ORDER BY id',
      );
      expect(rows).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ actor: 'admin', action: 'registerCluster', result: 'SUCCESS', target_id: 'prod' }),
          expect.objectContaining({ actor: 'admin', action: 'registerCluster', result: 'FAILURE' }),
          expect.objectContaining({ actor: 'viewer', action: 'registerCluster', result: 'DENIED' }),
          expect.objectContaining({ actor: 'anonymous', action: 'setCsrAutoApprove', result: 'DENIED' }),
          expect.objectContaining({ actor: 'admin', action: 'login', result: 'DENIED' }),
          expect.objectContaining({ actor: 'admin', action: 'createUser', result: 'SUCCESS', target_id: 'viewer' }),
        ]),
      );
    });
  });

  describe('hostile requests', () => {
    it('refuses an oversized body with 413 and a malformed query with a parse error', async () => {
      // Signed in: without a session the smaller MAX_ANONYMOUS_REQUEST_BYTES applies (edge.api.spec.ts).
      const big = await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ query: `{ clusters { id } } #${'x'.repeat(1_100_000)}` }) });
      expect(big.status).toBe(413);
      const tooLarge = ((await big.json()) as GraphQLResponse).errors?.[0];
      expect(tooLarge?.message).toBe('request body is too large');
      expect(tooLarge?.extensions).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', messageCode: 'error.bodyTooLarge', messageParams: {} });
      const malformed = await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ clusters { id ' }) });
      expect(malformed.status).toBe(400);
      expect(((await malformed.json()) as GraphQLResponse).errors?.[0]?.extensions?.['code']).toBe('GRAPHQL_PARSE_FAILED');
      const notJson = await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
      expect(notJson.status).toBe(400);
    });

    it('refuses queries nested too deep or with too many aliases', async () => {
      const deep = `{ __schema { types { fields { type ${'{ ofType '.repeat(10)}{ name }${' }'.repeat(10)} } } } }`;
      const result = await harness.gql(deep, {}, admin);
      expect(result.errors?.[0]?.message).toMatch(/^query is nested \d+ levels deep; at most 12 are allowed$/);
      const aliases = `{ ${Array.from({ length: 70 }, (_, index) => `a${index}: clusters { id }`).join(' ')} }`;
      expect((await harness.gql(aliases, {}, admin)).errors?.[0]?.message).toBe('query uses more than 64 aliases');
    });
  });

  describe('audit trail', () => {
    type Entry = { id: string; at: string; actor: string; action: string; targetType: string; targetId: string | null; result: string; code: string | null; detail: Record<string, unknown> };
    const AUDIT = 'query($f: AuditLogFilter, $n: Int, $b: ID) { auditLog(filter: $f, first: $n, before: $b) { hasMore entries { id at actor action targetType targetId result code detail } } }';
    const page = async (variables: Record<string, unknown>) => {
      const result = await harness.gql<{ auditLog: { hasMore: boolean; entries: Entry[] } }>(AUDIT, variables, admin);
      expect(result.errors).toBeUndefined();
      return result.data?.auditLog ?? { hasMore: false, entries: [] };
    };

    it('tells an admin who registered which cluster, with the credentials redacted', async () => {
      const { entries } = await page({ f: { action: 'registerCluster', result: 'SUCCESS' } });
      const prod = entries.find((entry) => entry.targetId === 'prod');
      expect(prod).toMatchObject({ actor: 'admin', action: 'registerCluster', targetType: 'Cluster', result: 'SUCCESS', code: null });
      expect(prod?.detail).toMatchObject({ args: { input: { name: 'prod', kubeconfig: '[redacted]' } } });
      expect(JSON.stringify(entries)).not.toContain('kube-admin-token-SECRET-4242');
      const byTarget = await page({ f: { targetId: 'prod' } });
      expect(byTarget.entries.length).toBeGreaterThan(0);
      expect(byTarget.entries.every((entry) => entry.targetId === 'prod')).toBe(true);
    });

    it('lists refusals and failures with their codes, filtered by actor and result', async () => {
      const denied = await page({ f: { actor: 'viewer', result: 'DENIED' } });
      expect(denied.entries.length).toBeGreaterThan(0);
      // Refused for the role (FORBIDDEN), a wrong password at sign-in (UNAUTHENTICATED) or sign-ins slowed down (LOGIN_THROTTLED).
      expect(denied.entries.every((entry) => entry.actor === 'viewer' && entry.result === 'DENIED' && ['FORBIDDEN', 'UNAUTHENTICATED', 'LOGIN_THROTTLED'].includes(entry.code ?? ''))).toBe(true);
      expect(denied.entries).toContainEqual(expect.objectContaining({ action: 'createUser', code: 'FORBIDDEN' }));
      const failed = await page({ f: { action: 'registerCluster', result: 'FAILURE' } });
      expect(failed.entries.map((entry) => entry.code)).toContain('CONFLICT');
    });

    it('pages newest first without repeating or skipping an entry', async () => {
      const all = await page({ n: 200 });
      const ids = all.entries.map((entry) => Number(entry.id));
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      const seen: string[] = [];
      let before: string | null = null;
      for (let more = true; more; ) {
        const next = await page({ n: 7, b: before });
        seen.push(...next.entries.map((entry) => entry.id));
        before = next.entries.at(-1)?.id ?? null;
        more = next.hasMore;
      }
      expect(seen).toEqual(all.entries.map((entry) => entry.id));
    });

    it('refuses a page size out of range and a cursor that is not an entry id', async () => {
      for (const [variables, field] of [[{ n: 0 }, 'first'], [{ n: 201 }, 'first'], [{ b: "1' OR 1=1" }, 'before']] as const) {
        const result = await harness.gql(AUDIT, variables, admin);
        expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
      }
    });
  });

  describe('WebSocket endpoint', () => {
    const afterDisposals: Array<() => unknown> = [];
    afterAll(async () => {
      await Promise.all(afterDisposals.map((dispose) => dispose()));
    });
    /** A graphql-ws connection: whether connection_init was accepted, its close code once it closes, and who it runs as (a round trip on it). */
    const openSocket = (authorization?: string) => {
      let opened: (connected: boolean) => void = () => undefined;
      let closedWith: (code: number) => void = () => undefined;
      const connected = new Promise<boolean>((resolve) => (opened = resolve));
      const closed = new Promise<number>((resolve) => (closedWith = resolve));
      const client = createClient({
        url: `${harness.url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        lazy: false,
        retryAttempts: 0,
        onNonLazyError: () => undefined,
        connectionParams: authorization ? { authorization } : {},
        on: {
          connected: () => opened(true),
          closed: (event) => {
            opened(false);
            closedWith((event as { code: number }).code);
          },
        },
      });
      afterDisposals.push(() => client.dispose());
      const whoAmI = () =>
        new Promise<unknown>((resolve, reject) => {
          client.subscribe({ query: '{ me { username } }' }, { next: (result) => resolve(result.data), error: reject, complete: () => undefined });
        });
      return { connected, closed, whoAmI, dispose: () => client.dispose() };
    };
    const connect = async (authorization?: string) => {
      const socket = openSocket(authorization);
      if (await socket.connected) {
        await socket.dispose();
        return { connected: true };
      }
      return { connected: false, closeCode: await socket.closed };
    };

    it('authenticates in connection_init', async () => {
      expect(await connect()).toEqual({ connected: false, closeCode: 4403 });
      expect(await connect('Bearer forged')).toEqual({ connected: false, closeCode: 4403 });
      expect(await connect(`Bearer ${await harness.tokenFor('VIEWER')}`)).toEqual({ connected: true });
    });

    it('closes the connection of a session signed out elsewhere, and no other', async () => {
      await harness.gql('mutation { createUser(input: { username: "roamer", password: "roamer-password-1", role: VIEWER }) { id } }', {}, admin);
      const browserToken = await harness.login('roamer', 'roamer-password-1');
      const browser = openSocket(`Bearer ${browserToken}`);
      const phone = openSocket(`Bearer ${await harness.login('roamer', 'roamer-password-1')}`);
      const bystander = openSocket(`Bearer ${await harness.tokenFor('VIEWER')}`);
      expect([await browser.connected, await phone.connected, await bystander.connected]).toEqual([true, true, true]);
      const elsewhere = await harness.login('roamer', 'roamer-password-1');
      const sessions = await harness.gql<{ mySessions: Array<{ id: string; current: boolean }> }>('{ mySessions { id current } }', {}, browserToken);
      const browserSession = sessions.data?.mySessions.find((session) => session.current)?.id;
      expect((await harness.gql('mutation($id: ID!) { revokeSession(id: $id) { id } }', { id: browserSession }, elsewhere)).data).toEqual({ revokeSession: { id: browserSession } });
      expect(await browser.closed).toBe(4403);
      // The revocation closed every connection it matched at once: the others still answer afterwards.
      expect(await phone.whoAmI()).toEqual({ me: { username: 'roamer' } });
      expect(await bystander.whoAmI()).toEqual({ me: { username: expect.any(String) } });
      expect((await harness.gql('mutation { logout }', {}, elsewhere)).data).toEqual({ logout: true });
      expect((await harness.gql('mutation { revokeAllSessions { username } }', {}, await harness.login('roamer', 'roamer-password-1'))).errors).toBeUndefined();
      expect(await phone.closed).toBe(4403);
    });

    it("asks a user's connections to reconnect when their role changes, so they run with the new role", async () => {
      await harness.gql('mutation { createUser(input: { username: "promoted", password: "promoted-password-1", role: VIEWER }) { id } }', {}, admin);
      const socket = openSocket(`Bearer ${await harness.login('promoted', 'promoted-password-1')}`);
      expect(await socket.connected).toBe(true);
      expect((await harness.gql('mutation { setUserRole(username: "promoted", role: OPERATOR) { role } }', {}, admin)).data).toEqual({ setUserRole: { role: 'OPERATOR' } });
      expect(await socket.closed).toBe(1012);
    });
  });

  it('the committed schema.graphql matches the code (run `npx nx run api:emit-schema` after changing resolvers)', async () => {
    const services = { auth: {}, clusters: {}, certificates: {}, nodes: {}, installs: {}, removals: {}, artifacts: {}, autoscaling: {}, audit: {}, jobs: {}, remediation: {}, fleet: {}, inventory: {}, webhooks: {}, approvals: {}, events: createInProcessEventBus() } as unknown as ApiServices;
    const committed = await readFile('libs/shared/api-schema/schema.graphql', 'utf8');
    expect(printApiSchema(await buildApiSchema(services))).toBe(committed);
  });
});
