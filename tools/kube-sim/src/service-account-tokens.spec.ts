import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { DEFAULT_SERVICE_ACCOUNT_ISSUER } from './service-account-tokens';
import { apiFailure, kubeConfigFor, rawRequest } from './testing/kube-clients';

async function whoami(sim: KubeSim, token: string): Promise<{ status: number; user: Record<string, unknown> | null }> {
  const answer = await rawRequest(sim, {
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    token,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
  });
  return { status: answer.status, user: answer.status === 201 ? (JSON.parse(answer.body) as { status: { userInfo: Record<string, unknown> } }).status.userInfo : null };
}

describe('service-account tokens (TokenRequest API and authentication)', () => {
  let sim: KubeSim;
  let core: CoreV1Api;
  let now = Date.parse('2026-12-01T10:00:00Z');

  beforeAll(async () => {
    sim = await startKubeSim({ serviceAccountTokens: { now: () => now } });
    core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'bootstrap' } } });
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('issues a signed JWT for an existing ServiceAccount that authenticates as that account until it expires', async () => {
    const account = await core.createNamespacedServiceAccount({ namespace: 'bootstrap', body: { metadata: { name: 'run-1' } } });
    const answer = await core.createNamespacedServiceAccountToken({ name: 'run-1', namespace: 'bootstrap', body: { spec: { audiences: [], expirationSeconds: 900 } } });
    expect(answer.spec).toMatchObject({ audiences: [DEFAULT_SERVICE_ACCOUNT_ISSUER], expirationSeconds: 900 });
    expect(answer.status?.expirationTimestamp?.toISOString()).toBe('2026-12-01T10:15:00.000Z');
    const token = answer.status?.token ?? '';
    const [, payload] = token.split('.');
    expect(JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'))).toMatchObject({
      iss: DEFAULT_SERVICE_ACCOUNT_ISSUER,
      sub: 'system:serviceaccount:bootstrap:run-1',
      aud: [DEFAULT_SERVICE_ACCOUNT_ISSUER],
      exp: Date.parse('2026-12-01T10:15:00Z') / 1000,
      'kubernetes.io': { namespace: 'bootstrap', serviceaccount: { name: 'run-1', uid: account.metadata?.uid } },
    });

    expect(await whoami(sim, token)).toEqual({
      status: 201,
      user: {
        username: 'system:serviceaccount:bootstrap:run-1',
        uid: account.metadata?.uid,
        groups: ['system:serviceaccounts', 'system:serviceaccounts:bootstrap', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^JTI=[0-9a-f-]{36}$/)] },
      },
    });
    now += 899_000;
    expect((await whoami(sim, token)).status).toBe(201);
    now += 1000;
    expect((await whoami(sim, token)).status).toBe(401);
  });

  it('stops accepting a token once its ServiceAccount is deleted, and a re-created account of the same name does not revive it', async () => {
    await core.createNamespacedServiceAccount({ namespace: 'bootstrap', body: { metadata: { name: 'run-2' } } });
    const token = sim.requestServiceAccountToken('bootstrap', 'run-2', { expirationSeconds: 3600 });
    expect((await whoami(sim, token)).status).toBe(201);
    await core.deleteNamespacedServiceAccount({ name: 'run-2', namespace: 'bootstrap' });
    expect((await whoami(sim, token)).status).toBe(401);
    await core.createNamespacedServiceAccount({ namespace: 'bootstrap', body: { metadata: { name: 'run-2' } } });
    expect((await whoami(sim, token)).status).toBe(401);
  });

  it('refuses tokens for another audience, a tampered payload, and durations the API server refuses', async () => {
    await core.createNamespacedServiceAccount({ namespace: 'bootstrap', body: { metadata: { name: 'run-3' } } });
    const foreign = sim.requestServiceAccountToken('bootstrap', 'run-3', { audiences: ['vault'] });
    expect((await whoami(sim, foreign)).status).toBe(401);

    const token = sim.requestServiceAccountToken('bootstrap', 'run-3');
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub: string };
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    expect((await whoami(sim, `${header}.${forged}.${signature}`)).status).toBe(401);

    const short = await apiFailure(core.createNamespacedServiceAccountToken({ name: 'run-3', namespace: 'bootstrap', body: { spec: { audiences: [], expirationSeconds: 60 } } }));
    expect(short.code).toBe(422);
    expect(short.status['message']).toBe('TokenRequest.authentication.k8s.io "run-3" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    const missing = await apiFailure(core.createNamespacedServiceAccountToken({ name: 'nobody', namespace: 'bootstrap', body: { spec: { audiences: [] } } }));
    expect(missing).toMatchObject({ code: 404, status: { message: 'serviceaccounts "nobody" not found', reason: 'NotFound' } });
  });

  it('lists the token subresource in discovery', async () => {
    const resources = await core.getAPIResources();
    expect(resources.resources.find((resource) => resource.name === 'serviceaccounts/token')).toMatchObject({ kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] });
  });
});
