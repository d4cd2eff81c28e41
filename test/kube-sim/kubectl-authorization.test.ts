import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { generateCertificateRequest, startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';

const KUBECTL = '/usr/bin/kubectl';
const CLUSTER_ROLE = join(__dirname, '../../deploy/base/rbac/cluster-role.yaml');
const ROLE = join(__dirname, '../../deploy/base/rbac/role.yaml');
const RS_UID = 'b1f0c7e2-0000-4000-8000-0000000000a1';
const DS_UID = 'b1f0c7e2-0000-4000-8000-0000000000d5';
const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true}]`;
const ready = '{phase: Running, conditions: [{type: Ready, status: "True"}]}';
const pod = (name: string, node: string, extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: shop, labels: {app: web}, ownerReferences: ${owner('ReplicaSet', 'web', RS_UID)}${extra}}
spec: {nodeName: ${node}, terminationGracePeriodSeconds: 0, containers: [{name: c, image: web}]}
status: ${ready}`;

/** w1 and w2 hold a ReplicaSet's pods and a DaemonSet pod; w3 is drained with --disable-eviction. */
const SEED = [
  ...['w1', 'w2', 'w3', 'w4'].map((n) => `apiVersion: v1\nkind: Node\nmetadata: {name: ${n}}\nstatus: {conditions: [{type: Ready, status: "True"}]}`),
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: web}]}}}`,
  `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}`,
  pod('web-1', 'w1'),
  pod('web-2', 'w2'),
  pod('web-3', 'w3'),
  `apiVersion: v1
kind: Pod
metadata: {name: agent-w1, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'agent', DS_UID)}}
spec: {nodeName: w1, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}`,
].join('\n---\n');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('kube-sim authorization through the real kubectl', () => {
  let sim: KubeSim;
  let dir: string;

  const kubectl = (kubeconfig: string, args: string[], timeoutMs = 60_000): Promise<Run> =>
    new Promise((resolve) => {
      const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, `cache-${kubeconfig.split('/').pop() ?? ''}`) };
      execFile(KUBECTL, args, { env, timeout: timeoutMs }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
      });
    });
  const admin = (args: string[]): Promise<Run> => kubectl(join(dir, 'admin'), args);

  /** A ServiceAccount identity bound to `roles` (YAML), with its kubeconfig written to a file. */
  async function identity(name: string, roles: string): Promise<string> {
    const made = await sim.createIdentity({ roles, serviceAccount: { namespace: 'ops', name } });
    const file = join(dir, name);
    await writeFile(file, made.kubeconfig, { mode: 0o600 });
    return file;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-sim-authz-'));
    sim = await startKubeSim({ seed: SEED, kubeconfigOut: join(dir, 'admin') });
  });

  afterAll(async () => {
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('auth can-i as the admin: everything', async () => {
    expect(await admin(['auth', 'can-i', '*', '*', '--all-namespaces'])).toMatchObject({ code: 0, stdout: 'yes\n' });
    const list = await admin(['auth', 'can-i', '--list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[1]).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/);
  });

  it('auth can-i as a ServiceAccount (--as): no eviction without a role, yes with the product’s shipped one', async () => {
    const as = ['--as=system:serviceaccount:ops:auditor'];
    expect(await admin(['auth', 'can-i', 'create', 'pods', '--subresource=eviction', '-n', 'shop', ...as])).toMatchObject({ code: 1, stdout: 'no\n' });
    expect(await admin(['auth', 'can-i', 'list', 'nodes', ...as])).toMatchObject({ code: 1 });
    await sim.createIdentity({ roleFiles: [CLUSTER_ROLE, ROLE], serviceAccount: { namespace: 'ops', name: 'auditor' } });
    expect(await admin(['auth', 'can-i', 'create', 'pods', '--subresource=eviction', '-n', 'shop', ...as])).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await admin(['auth', 'can-i', 'delete', 'nodes', ...as])).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await admin(['auth', 'can-i', 'update', 'nodes', ...as])).toMatchObject({ code: 1, stdout: 'no\n' });
    // `signers` is not a served resource, so kubectl cannot name it in can-i; a SubjectAccessReview can.
    const approves = async (signer: string): Promise<string> => {
      const review = stringify({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'system:serviceaccount:ops:auditor', groups: ['system:serviceaccounts'], resourceAttributes: { group: 'certificates.k8s.io', resource: 'signers', verb: 'approve', name: signer } },
      });
      await writeFile(join(dir, 'review.yaml'), review);
      return (await admin(['create', '-f', join(dir, 'review.yaml'), '-o', 'jsonpath={.status.allowed}'])).stdout;
    };
    expect(await approves('kubernetes.io/kubelet-serving')).toBe('true');
    expect(await approves('kubernetes.io/kube-apiserver-client')).toBe('false');
    expect(await admin(['auth', 'can-i', 'update', 'leases/ccos-scaler-csr-approver', '-n', 'kube-system', ...as])).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await admin(['auth', 'can-i', 'update', 'leases/kube-scheduler', '-n', 'kube-system', ...as])).toMatchObject({ code: 1, stdout: 'no\n' });
    const rules = await admin(['auth', 'can-i', '--list', ...as]);
    expect(rules.stdout).toMatch(/^pods\/eviction\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(rules.stdout).toMatch(/^nodes\s+\[\]\s+\[\]\s+\[get list watch patch delete\]$/m);
    expect(rules.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch delete\]$/m);
    expect(await admin(['auth', 'can-i', 'watch', 'pods', '--all-namespaces', ...as])).toMatchObject({ code: 0, stdout: 'yes\n' });
  });

  it('auth can-i as a node (--as system:node:… --as-group system:nodes): the Node authorizer’s answers', async () => {
    const as = ['--as=system:node:w1', '--as-group=system:nodes'];
    expect(await admin(['auth', 'can-i', 'create', 'certificatesigningrequests.certificates.k8s.io', ...as])).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await admin(['auth', 'can-i', 'update', 'leases/w1', '-n', 'kube-node-lease', ...as])).toMatchObject({ code: 0, stdout: 'yes\n' });
    const other = await admin(['auth', 'can-i', 'update', 'leases/w2', '-n', 'kube-node-lease', ...as]);
    expect(other).toMatchObject({ code: 1, stdout: 'no - can only access node lease with the same name as the requesting node\n' });
    expect(await admin(['auth', 'can-i', 'get', 'secrets/anything', '-n', 'shop', ...as])).toMatchObject({ code: 1, stdout: "no - no relationship found between node 'w1' and this object\n" });
    expect(await admin(['auth', 'can-i', 'delete', 'nodes', ...as])).toMatchObject({ code: 1, stdout: 'no\n' });
  });

  it('a ServiceAccount without pods/eviction cannot drain (Forbidden, named); with the shipped role it can', async () => {
    const shipped = (await readFile(CLUSTER_ROLE, 'utf8')).trim();
    const [role] = parseAllDocuments(shipped).map((d) => d.toJSON() as { metadata: { name: string }; rules: { resources: string[] }[] });
    role.metadata.name = 'ccos-scaler-without-eviction';
    role.rules = role.rules.filter((r) => !r.resources.includes('pods/eviction'));
    const withoutEviction = await identity('no-eviction', stringify(role));
    const refused = await kubectl(withoutEviction, ['drain', 'w1', '--ignore-daemonsets', '--timeout=20s']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('pods "web-1" is forbidden: User "system:serviceaccount:ops:no-eviction" cannot create resource "pods/eviction" in API group "" in the namespace "shop"');
    expect(sim.store.get(sim.resource('pods'), 'shop', 'web-1')).toBeDefined();

    const product = await identity('ccos-scaler', `${shipped}\n---\n${(await readFile(ROLE, 'utf8')).trim()}`);
    const drained = await kubectl(product, ['drain', 'w1', '--ignore-daemonsets', '--timeout=20s']);
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toContain('node/w1 drained');
    expect(sim.store.get(sim.resource('pods'), 'shop', 'web-1')).toBeUndefined();
  });

  it('the pod cache’s watch of scheduled pods: Forbidden (named) without watch on pods, streamed with the shipped role', async () => {
    const shipped = (await readFile(CLUSTER_ROLE, 'utf8')).trim();
    const [role] = parseAllDocuments(shipped).map((d) => d.toJSON() as { metadata: { name: string }; rules: { resources: string[]; verbs: string[] }[] });
    role.metadata.name = 'ccos-scaler-without-pod-watch';
    role.rules = role.rules.map((r) => (r.resources.includes('pods') ? { ...r, verbs: r.verbs.filter((verb) => verb !== 'watch') } : r));
    const withoutWatch = await identity('no-pod-watch', stringify(role));
    const args = ['get', 'pods', '-A', '--watch', '--field-selector', 'spec.nodeName!=', '--request-timeout=3s'];
    const refused = await kubectl(withoutWatch, args, 20_000);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('pods is forbidden: User "system:serviceaccount:ops:no-pod-watch" cannot watch resource "pods" in API group "" at the cluster scope');

    const product = await identity('pod-cache', shipped);
    const streamed = await kubectl(product, [...args, '--output-watch-events'], 20_000);
    expect(streamed.stderr).not.toContain('forbidden');
    expect(streamed.stdout).toMatch(/^ADDED\s+kube-system\s+agent-w1\s/m);
  });

  it('approving a CSR without approve on its signer is Forbidden', async () => {
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:w5', organizations: ['system:nodes'] });
    sim.api.create(
      sim.resource('certificatesigningrequests'),
      undefined,
      { metadata: { name: 'w5-client' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } },
      { user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] } },
    );
    const approverRole = stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'csr-approver-without-signer' },
      rules: [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['get', 'list'] },
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] },
      ],
    });
    const approver = await identity('approver', approverRole);
    const refused = await kubectl(approver, ['certificate', 'approve', 'w5-client']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'certificatesigningrequests.certificates.k8s.io "w5-client" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client-kubelet"',
    );
    const product = await identity('ccos-scaler', (await readFile(CLUSTER_ROLE, 'utf8')).trim());
    expect((await kubectl(product, ['certificate', 'approve', 'w5-client'])).stdout).toContain('certificatesigningrequest.certificates.k8s.io/w5-client approved');
  });

  it('drain --disable-eviction deletes the pods (protobuf DeleteOptions) and drains the node', async () => {
    const run = await admin(['drain', 'w3', '--disable-eviction', '--ignore-daemonsets', '--timeout=20s']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('pod/web-3 deleted');
    expect(run.stdout).toContain('node/w3 drained');
    expect(sim.store.get(sim.resource('pods'), 'shop', 'web-3')).toBeUndefined();
  });

  it('a Lease update with a millisecond renewTime is refused with 400', async () => {
    const lease = (renewTime: string) => stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock', namespace: 'default' }, spec: { holderIdentity: 'me', renewTime } });
    await writeFile(join(dir, 'lease.yaml'), lease('2026-12-01T10:00:00.000000Z'));
    expect((await admin(['create', '-f', join(dir, 'lease.yaml')])).code).toBe(0);
    await writeFile(join(dir, 'lease.yaml'), lease('2026-12-01T10:00:01.123Z'));
    const refused = await admin(['replace', '-f', join(dir, 'lease.yaml')]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-12-01T10:00:01.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
    expect(sim.store.get(sim.resource('leases'), 'default', 'lock')?.spec?.['renewTime']).toBe('2026-12-01T10:00:00.000000Z');
  });
});
