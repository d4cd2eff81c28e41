import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { SecretLedger } from '@ccos/api/util-graphql/testing';
import { CreateUserDocument, LoginDocument, RegisterClusterDocument } from '@ccos/shared/api-schema';
import { loadConfig, type Environment } from '../app/config';
import { type RunningApi, startApi } from '../app/start-api';

export { writeStandInArtifactSet } from '@ccos/api/feature-artifacts/testing';

/** A kube-sim, as far as registering it needs. */
type ShippedSim = Parameters<typeof shippedIdentityKubeconfig>[0];

export const ADMIN_PASSWORD = 'admin-password-for-tests';
export const TEST_SECRET_KEY = 'test-secret-key-0123456789-abcdefghijklmnop';

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown>; path?: unknown[] }>;
}

/** A running API on a fresh database of the real Postgres server, with its log lines captured. */
export interface ApiHarness {
  readonly api: RunningApi;
  readonly url: string;
  readonly database: TestDatabase;
  /** Every log line written so far, raw. */
  readonly logs: string[];
  /**
   * Every value sent in a `@secret` argument (read from the emitted schema) and every response:
   * `stop()` fails when one of those values appears in a response, a log line or an audit_log row.
   * Requests sent without `gql` can be noted here too.
   */
  readonly secrets: SecretLedger;
  /**
   * Sends an operation of libs/shared/api-schema (a generated document: its result and variables
   * typed from the schema), or a query written in the spec (typed by the spec) for what the
   * shared operations do not ask.
   */
  gql<TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables, token?: string | null): Promise<GraphQLResponse<TData>>;
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GraphQLResponse<T>>;
  /** Signs in and returns the bearer token. */
  login(username: string, password: string): Promise<string>;
  /** Creates a user with `role` (as admin) and returns its token. */
  tokenFor(role: 'VIEWER' | 'OPERATOR' | 'ADMIN'): Promise<string>;
  /**
   * Registers a kube-sim seeded with SHIPPED_RBAC as cluster `sim`, auto-approve off, with a
   * kubeconfig of the service's account there (bound to exactly the shipped roles, as an operator
   * registers a cluster), or with `kubeconfig` when a test says why it needs another; returns its id.
   */
  registerSimCluster(sim: ShippedSim, options?: { kubeconfig?: string }): Promise<string>;
  stop(): Promise<void>;
}

export interface ApiHarnessOptions {
  /** Another replica: the database of a running harness, which stays its owner's to drop. */
  readonly database?: TestDatabase;
}

export async function startApiHarness(env: Environment = {}, options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const database = options.database ?? (await createTestDatabase());
  const dataDir = await mkdtemp(join(tmpdir(), 'ccos-api-'));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config = await loadConfig({
    DATABASE_URL: database.url,
    SECRET_KEY: TEST_SECRET_KEY,
    ADMIN_PASSWORD,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'debug',
    // The specs' kube-sim listens on 127.0.0.1.
    ALLOW_CLUSTER_ADDRESSES: 'loopback',
    ...env,
  });
  const api = await startApi(config, { logDestination: sink });
  const secrets = SecretLedger.fromEmittedSchema();
  secrets.noteSecret(ADMIN_PASSWORD, 'ADMIN_PASSWORD (environment)');
  const logText = () => logs.join('\n');
  const gql: ApiHarness['gql'] = async (operation: string | TypedDocumentNode, variables: unknown = {}, token: string | null = null): Promise<GraphQLResponse<never>> => {
    const query = typeof operation === 'string' ? operation : print(operation);
    secrets.noteRequest({ query, variables: variables as Record<string, unknown> }, logText().length);
    const response = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    secrets.noteResponse(text);
    return JSON.parse(text) as GraphQLResponse<never>;
  };
  const login = async (username: string, password: string): Promise<string> => {
    const result = await gql(LoginDocument, { username, password });
    if (!result.data?.login) {
      throw new Error(`login failed: ${JSON.stringify(result.errors)}`);
    }
    return result.data.login.token;
  };
  const tokens = new Map<string, string>();
  const tokenFor = async (role: 'VIEWER' | 'OPERATOR' | 'ADMIN'): Promise<string> => {
    const known = tokens.get(role);
    if (known) {
      return known;
    }
    const admin = await login('admin', ADMIN_PASSWORD);
    if (role === 'ADMIN') {
      tokens.set(role, admin);
      return admin;
    }
    const username = role.toLowerCase();
    const password = `${username}-password-123`;
    const created = await gql(CreateUserDocument, { input: { username, password, role } }, admin);
    if (created.errors) {
      throw new Error(JSON.stringify(created.errors));
    }
    const token = await login(username, password);
    tokens.set(role, token);
    return token;
  };
  const registerSimCluster = async (sim: ShippedSim, options: { kubeconfig?: string } = {}): Promise<string> => {
    const kubeconfig = options.kubeconfig ?? shippedIdentityKubeconfig(sim);
    const registered = await gql(
      RegisterClusterDocument,
      { input: { name: 'sim', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig, csrAutoApprove: false } },
      await tokenFor('ADMIN'),
    );
    if (!registered.data?.registerCluster) {
      throw new Error(`registerCluster failed: ${JSON.stringify(registered.errors)}`);
    }
    return registered.data.registerCluster.id;
  };
  return {
    api,
    url: api.url,
    database,
    logs,
    secrets,
    gql,
    login,
    tokenFor,
    registerSimCluster,
    async stop() {
      const auditRows: unknown[] = await api.dataSource.query('SELECT * FROM audit_log').catch(() => []);
      await api.close();
      if (!options.database) {
        await database.drop();
      }
      await rm(dataDir, { recursive: true, force: true });
      secrets.assertNoLeaks({ log: logText(), auditRows }, 'API harness');
    },
  };
}
