import { randomBytes, randomUUID } from 'node:crypto';
import type { GraphQLArgument } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { SecretLedger } from '@ccos/api/util-graphql/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, E2E_ADMIN_PASSWORD, startApiProcess } from '../support/api-process';
import { emittedSchema, isSecretMarked, operationFor, rootFields, secretPositions, selectionOf, takesCredential } from '../support/schema-requests';
import { Random, plausibleValue } from '../support/schema-values';

/**
 * Every argument the emitted schema marks @secret, sent as a client would (variables and
 * literals, valid and refused, by an admin and by nobody), never comes back: not in a response,
 * not in the log, not in an audit entry, not in an error. The same check runs at the stop of
 * every API process of the end-to-end suite (test/support/api-process.ts and the in-process
 * harness), over whatever those tests sent; this file makes sure every mark is exercised.
 */
const schema = emittedSchema();

describe('secrets marked @secret in the schema', () => {
  let api: ApiProcess;
  let sim: KubeSim;
  let admin: string;
  const sent: string[] = [];
  const random = new Random(4242);

  beforeAll(async () => {
    [api, sim] = await Promise.all([startApiProcess({ env: { SSH_CONNECT_TIMEOUT_MS: '1000' } }), startKubeSim({ seed: SHIPPED_RBAC })]);
    admin = await api.login();
  });
  afterAll(async () => {
    await api?.stop().catch(() => undefined);
    await sim?.stop();
  });

  it('never come back from the service, in any response, log line, audit entry or error', async () => {
    const marked = SecretLedger.fromEmittedSchema().markedPositions();
    // The marks are where they belong; a schema without them would make this test vacuous.
    expect(marked).toEqual(expect.arrayContaining(['Mutation.login(password)', 'Mutation.changePassword(currentPassword)', 'CreateUserInput.password', 'RegisterClusterInput.kubeconfig', 'SshCredentialsInput.privateKey']));

    // A cluster to act on, registered with a secret of its own.
    const registered = await api.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'secrets', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(sim) } },
      admin,
    );
    expect(registered.errors).toBeUndefined();
    const clusterId = registered.data?.registerCluster.id ?? randomUUID();
    const context = (omit: ReadonlySet<string> = new Set()) => ({
      random,
      omit,
      idFor: (name: string) => (name === 'clusterId' ? clusterId : randomUUID()),
      secretFor: () => {
        const secret = `sec-${randomBytes(9).toString('base64url')}-long`;
        sent.push(secret);
        return secret;
      },
      apiServerUrl: sim.url,
      kubeconfigWith: (token: string) => sim.kubeconfigFor({ token }),
    });

    const roots = rootFields(schema).filter((root) => root.kind !== 'subscription' && takesCredential(root));
    expect(roots.map((root) => root.field.name)).toEqual(expect.arrayContaining(['login', 'changePassword', 'createUser', 'registerCluster', 'addNode', 'updateNodeCredentials']));
    for (const root of roots) {
      const optionalSecrets = root.field.args.flatMap((arg) => secretPositions(arg.type));
      // All secrets at once, then each optional one left out in turn (kubeconfig or token).
      for (const omit of [new Set<string>(), ...optionalSecrets.map((position) => new Set(optionalSecrets.filter((other) => other !== position)))]) {
        for (const variant of ['variables', 'literals', 'refused input', 'wrong type'] as const) {
          for (const token of [admin, null]) {
            const args = root.field.args.map((definition: GraphQLArgument) => {
              let value = plausibleValue(definition, `${root.kind === 'query' ? 'Query' : 'Mutation'}.${root.field.name}(${definition.name})`, context(omit));
              if (variant === 'refused input' && value && typeof value === 'object' && !Array.isArray(value)) {
                const text = Object.entries(value as Record<string, unknown>).find(([key, inner]) => typeof inner === 'string' && !sent.some((secret) => String(inner).includes(secret)) && key !== 'clusterId');
                if (text) {
                  value = { ...(value as Record<string, unknown>), [text[0]]: `${text[1]}\u0000` };
                }
              }
              if (variant === 'wrong type' && (isSecretMarked(definition) || secretPositions(definition.type).length > 0)) {
                value = isSecretMarked(definition) ? [value] : Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, sent.includes(String(inner)) ? { nested: inner } : inner]));
              }
              return { definition, value, asLiteral: variant === 'literals' };
            });
            const { query, variables } = operationFor(root, args, selectionOf(root.field.type, 0));
            const answer = await api.gql(query, variables, token);
            expect(answer.data !== undefined || answer.errors !== undefined).toBe(true);
          }
        }
      }
    }
    const summary = api.secrets.summary();
    // Every mark was exercised, with fresh secrets, many times over.
    expect(summary.positions).toEqual(expect.arrayContaining(marked));
    expect(summary.checked).toBeGreaterThanOrEqual(marked.length * 4);
    // The check finds a secret when one does come back (so it cannot pass for want of looking).
    expect(api.secrets.leaks({ log: `${api.output()}\n${E2E_ADMIN_PASSWORD}` }).map((leak) => [leak.position, leak.where])).toEqual([['ADMIN_PASSWORD (environment)', 'the service log']]);
    // stop() reads the audit_log rows and fails on any secret in them, the log or the responses.
    const stopping = api.stop();
    await expect(stopping).resolves.toBeUndefined();
  });
});
