import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest, startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';

/** Debian's modules load only under this interpreter (the python3 first on PATH may be another). */
const PYTHON = '/usr/bin/python3';
const SCENARIOS = join(__dirname, 'python', 'scenarios.py');
const ADMIN = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };
const RS_UID = 'a7f0c7e2-0000-4000-8000-0000000000a1';

const SEED = `
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: shop, labels: {app: db}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: db, uid: ${RS_UID}, controller: true}]}
spec: {nodeName: n1, containers: [{name: c, image: db}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db-budget, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
`;

interface Observed {
  list: { names: string[]; resourceVersion: string; pageContinue: boolean; remaining: number };
  watch: string[];
  watchExpired: { status: number | null; reason: string };
  eviction: { status: number; message?: string; cause?: string };
  csr: { conditions: string[] };
  tokenRequest: { status: number; message?: string; expires?: boolean };
}

describe('the official Python client (python3-kubernetes) against kube-sim', () => {
  let sim: KubeSim;
  let dir: string;
  let observed: Observed;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-sim-python-'));
    sim = await startKubeSim({ seed: SEED, kubeconfigOut: join(dir, 'kubeconfig'), watchCacheSize: 5 });
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:n3', organizations: ['system:nodes'] });
    sim.api.create(
      sim.resource('certificatesigningrequests'),
      undefined,
      { metadata: { name: 'python-csr' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } },
      { user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] } },
    );
    // Eight writes push the resourceVersion before them out of the five-event watch cache.
    const configMaps = sim.resource('configmaps');
    const old = String(sim.store.resourceVersion);
    for (let i = 0; i < 8; i++) {
      sim.api.create(configMaps, 'default', { metadata: { name: `churn-${i}` } }, { user: ADMIN });
    }
    const fresh = String(sim.store.resourceVersion);
    sim.api.create(configMaps, 'default', { metadata: { name: 'after-fresh' } }, { user: ADMIN });
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(PYTHON, [SCENARIOS, join(dir, 'kubeconfig'), old, fresh], { timeout: 60_000, env: { PATH: '/usr/bin:/bin', HOME: dir } }, (error, out, err) =>
        error ? reject(new Error(`python scenarios failed: ${String(err)}`, { cause: error })) : resolve(String(out)),
      );
    });
    observed = JSON.parse(stdout) as Observed;
  });

  afterAll(async () => {
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists, with pages', () => {
    expect(observed.list).toMatchObject({ names: ['n1', 'n2'], pageContinue: true, remaining: 1 });
  });

  it('watches from a resourceVersion, and gets 410 Gone for one the watch cache no longer holds', () => {
    expect(observed.watch).toEqual(['ADDED after-fresh']);
    expect(observed.watchExpired.status).toBe(410);
    expect(observed.watchExpired.reason).toMatch(/^Expired: too old resource version: \d+ \(\d+\)$/);
  });

  it('gets 429 for an eviction the PodDisruptionBudget forbids', () => {
    expect(observed.eviction).toEqual({
      status: 429,
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      cause: 'The disruption budget db-budget needs 1 healthy pods and has 1 currently',
    });
    expect(sim.store.get(sim.resource('pods'), 'shop', 'db-0')?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('requests a ServiceAccount token (TokenRequest) that authenticates as the account, which RBAC then refuses', () => {
    expect(observed.tokenRequest).toEqual({
      status: 403,
      message: 'nodes is forbidden: User "system:serviceaccount:default:py-robot" cannot list resource "nodes" in API group "" at the cluster scope',
      expires: true,
    });
  });

  it('approves a CSR through the approval subresource, which the signer then signs', async () => {
    expect(observed.csr.conditions).toEqual(['Approved']);
    await sim.signingIdle();
    const csr = sim.store.get(sim.resource('certificatesigningrequests'), undefined, 'python-csr');
    expect(Buffer.from(String(csr?.status?.['certificate'] ?? ''), 'base64').toString()).toContain('BEGIN CERTIFICATE');
    expect(csr?.status?.['conditions']).toEqual([expect.objectContaining({ type: 'Approved', reason: 'PythonApprove', lastUpdateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) })]);
  });
});
