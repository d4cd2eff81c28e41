import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, CertificatesV1Api, CoreV1Api, KubeConfig, PolicyV1Api, type V1CertificateSigningRequest, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest, startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';

const KUBECTL = '/usr/bin/kubectl';
const RS_UID = 'a1f0c7e2-0000-4000-8000-0000000000a1';
const DS_UID = 'a1f0c7e2-0000-4000-8000-0000000000d5';
const DB_RS_UID = 'a1f0c7e2-0000-4000-8000-0000000000db';

const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true, blockOwnerDeletion: true}]`;
const ready = '{phase: Running, conditions: [{type: Ready, status: "True"}], containerStatuses: [{name: c, ready: true, restartCount: 0, image: x, imageID: x, state: {running: {}}}]}';

/** w1: ReplicaSet, DaemonSet, mirror, emptyDir and unmanaged pods; w2: a pod guarded by a PDB; w3: spare. */
const SEED = `
apiVersion: v1
kind: Node
metadata: {name: w1, labels: {kubernetes.io/hostname: w1, node-role.kubernetes.io/worker: ""}}
status: {conditions: [{type: Ready, status: "True"}], nodeInfo: {kubeletVersion: v1.32.4}}
---
apiVersion: v1
kind: Node
metadata: {name: w2}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Node
metadata: {name: w3}
status: {conditions: [{type: Ready, status: "False"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-6d4f8, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: web}]}}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db-5c9b7, namespace: shop, uid: ${DB_RS_UID}}
spec: {replicas: 2, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: kube-system, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-6d4f8-aaaaa, namespace: shop, labels: {app: web}, ownerReferences: ${owner('ReplicaSet', 'web-6d4f8', RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: web}]}
status: ${ready}
---
apiVersion: v1
kind: Pod
metadata: {name: web-6d4f8-bbbbb, namespace: shop, labels: {app: web, cache: "true"}, ownerReferences: ${owner('ReplicaSet', 'web-6d4f8', RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 0, volumes: [{name: scratch, emptyDir: {}}], containers: [{name: c, image: web}]}
status: ${ready}
---
apiVersion: v1
kind: Pod
metadata: {name: node-agent-w1, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', DS_UID)}}
spec: {nodeName: w1, containers: [{name: c, image: agent}]}
status: ${ready}
---
apiVersion: v1
kind: Pod
metadata: {name: etcd-w1, namespace: kube-system, annotations: {kubernetes.io/config.mirror: 9f0c, kubernetes.io/config.source: file}}
spec: {nodeName: w1, containers: [{name: c, image: etcd}]}
status: ${ready}
---
apiVersion: v1
kind: Pod
metadata: {name: handmade, namespace: default}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: busybox}]}
status: ${ready}
---
apiVersion: v1
kind: Pod
metadata: {name: db-5c9b7-00000, namespace: shop, labels: {app: db}, ownerReferences: ${owner('ReplicaSet', 'db-5c9b7', DB_RS_UID)}}
spec: {nodeName: w2, terminationGracePeriodSeconds: 0, containers: [{name: c, image: db}]}
status: ${ready}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db-budget, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('the real kubectl against kube-sim', () => {
  let sim: KubeSim;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let core: CoreV1Api;
  let certificates: CertificatesV1Api;

  const kubectl = (args: string[], timeoutMs = 30_000): Promise<Run> =>
    new Promise((resolve) => {
      execFile(KUBECTL, args, { env, timeout: timeoutMs }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });

  const exists = (call: Promise<unknown>): Promise<boolean> =>
    call.then(
      () => true,
      (error: unknown) => {
        if (error instanceof ApiException && error.code === 404) {
          return false;
        }
        throw error;
      },
    );

  const podsOn = async (node: string): Promise<string[]> =>
    (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);

  async function csr(name: string, client: CertificatesV1Api, commonName: string): Promise<V1CertificateSigningRequest> {
    const { csrPem } = await generateCertificateRequest({ commonName, organizations: ['system:nodes'] });
    return client.createCertificateSigningRequest({
      body: { metadata: { name }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } },
    });
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-sim-kubectl-'));
    sim = await startKubeSim({ host: '127.0.0.1', seed: SEED, kubeconfigOut: join(dir, 'kubeconfig') });
    env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: join(dir, 'kubeconfig'), KUBECACHEDIR: join(dir, 'cache') };
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    certificates = kc.makeApiClient(CertificatesV1Api);
  });

  afterAll(async () => {
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('get nodes prints the server-side table', async () => {
    const run = await kubectl(['get', 'nodes']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n').map((l) => l.split(/\s+/));
    expect(lines[0]).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    expect(lines.slice(1).map((l) => [l[0], l[1], l[2]])).toEqual([
      ['w1', 'Ready', 'worker'],
      ['w2', 'Ready', '<none>'],
      ['w3', 'NotReady', '<none>'],
    ]);
    const json = JSON.parse((await kubectl(['get', 'node', 'w1', '-o', 'json'])).stdout) as { kind: string; metadata: { uid: string } };
    expect(json.kind).toBe('Node');
    expect(json.metadata.uid).toBe((await core.readNode({ name: 'w1' })).metadata?.uid);
  });

  it('label, cordon and uncordon change the Node', async () => {
    expect((await kubectl(['label', 'node', 'w3', 'pool=spare'])).code).toBe(0);
    expect((await core.readNode({ name: 'w3' })).metadata?.labels).toMatchObject({ pool: 'spare' });
    expect((await kubectl(['label', 'node', 'w3', 'pool-'])).code).toBe(0);
    expect((await core.readNode({ name: 'w3' })).metadata?.labels?.['pool']).toBeUndefined();

    expect((await kubectl(['cordon', 'w3'])).stdout).toContain('node/w3 cordoned');
    expect((await core.readNode({ name: 'w3' })).spec?.unschedulable).toBe(true);
    expect((await kubectl(['get', 'node', 'w3'])).stdout).toContain('NotReady,SchedulingDisabled');
    expect((await kubectl(['uncordon', 'w3'])).stdout).toContain('node/w3 uncordoned');
    expect((await core.readNode({ name: 'w3' })).spec?.unschedulable).toBeFalsy();
  });

  it('drain refuses an unmanaged pod without --force, naming it, and evicts nothing', async () => {
    const before = await podsOn('w1');
    const run = await kubectl(['drain', 'w1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=20s']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('cannot delete Pods that declare no controller (use --force to override): default/handmade');
    expect(await podsOn('w1')).toEqual(before);
    expect((await core.readNode({ name: 'w1' })).spec?.unschedulable).toBe(true);
  });

  it('drain --force evicts ReplicaSet, emptyDir and unmanaged pods, leaving DaemonSet and mirror pods', async () => {
    const run = await kubectl(['drain', 'w1', '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--timeout=30s']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('node/w1 drained');
    expect(run.stderr).toContain('ignoring DaemonSet-managed Pods: kube-system/node-agent-w1');
    expect((await podsOn('w1')).sort()).toEqual(['kube-system/etcd-w1', 'kube-system/node-agent-w1']);
    expect(await exists(core.readNamespacedPod({ name: 'handmade', namespace: 'default' }))).toBe(false);
  });

  it('drain blocked by a PodDisruptionBudget finishes once another ready pod makes the budget allow it', async () => {
    const policy = (() => {
      const kc = new KubeConfig();
      kc.loadFromString(sim.kubeconfig);
      return kc.makeApiClient(PolicyV1Api);
    })();
    expect((await policy.readNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop' })).status?.disruptionsAllowed).toBe(0);
    const started = Date.now();
    let stderr = '';
    const child = spawn(KUBECTL, ['drain', 'w2', '--ignore-daemonsets', '--timeout=40s'], { env });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
    await expect.poll(() => stderr, { timeout: 10_000, interval: 100 }).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(await exists(core.readNamespacedPod({ name: 'db-5c9b7-00000', namespace: 'shop' }))).toBe(true);

    const replacement: V1Pod = {
      metadata: { name: 'db-5c9b7-11111', labels: { app: 'db' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db-5c9b7', uid: DB_RS_UID, controller: true }] },
      spec: { nodeName: 'w3', containers: [{ name: 'c', image: 'db' }] },
    };
    const created = await core.createNamespacedPod({ namespace: 'shop', body: replacement });
    await core.replaceNamespacedPodStatus({ name: 'db-5c9b7-11111', namespace: 'shop', body: { ...created, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } });
    expect((await policy.readNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop' })).status?.disruptionsAllowed).toBe(1);

    expect(await exited, stderr).toBe(0);
    expect(stdout).toContain('node/w2 drained');
    expect(Date.now() - started).toBeGreaterThan(4000);
    expect(await podsOn('w2')).toEqual([]);
    expect((await policy.readNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop' })).status).toMatchObject({ currentHealthy: 1, disruptionsAllowed: 0 });
  });

  it('get csr -w prints a CSR created after it started, and its approval', async () => {
    // kubectl prints nothing for an empty list; one CSR beforehand shows when the list is done, and
    // the watch resumes from that list's resourceVersion, so nothing created afterwards is missed.
    await csr('existing-csr', certificates, 'system:node:w6');
    let out = '';
    const child = spawn(KUBECTL, ['get', 'csr', '-w'], { env });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    try {
      await expect.poll(() => out, { timeout: 10_000, interval: 50 }).toMatch(/NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\nexisting-csr\s/);
      expect(out).not.toContain('watched-csr');
      await csr('watched-csr', certificates, 'system:node:w7');
      await expect.poll(() => out, { timeout: 10_000, interval: 50 }).toMatch(/watched-csr\s+\S+\s+kubernetes\.io\/kube-apiserver-client-kubelet\s+kube-sim-admin\s+<none>\s+Pending/);
      expect((await kubectl(['certificate', 'approve', 'watched-csr'])).code).toBe(0);
      await expect.poll(() => out, { timeout: 10_000, interval: 50 }).toMatch(/watched-csr\s.*Approved,Issued/);
    } finally {
      child.kill();
    }
  });

  it('get pods -A -w --field-selector spec.nodeName!= (the pod cache’s list and watch): bound pods only, later ones ADDED, deleted ones DELETED', async () => {
    const unbound: V1Pod = { metadata: { name: 'not-scheduled' }, spec: { containers: [{ name: 'c', image: 'web' }] } };
    await core.createNamespacedPod({ namespace: 'default', body: unbound });
    let out = '';
    let requests = '';
    const child = spawn(KUBECTL, ['get', 'pods', '-A', '-w', '--field-selector', 'spec.nodeName!=', '--output-watch-events', '-v=6'], { env });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      requests += chunk.toString();
    });
    try {
      // The list, then a watch from its resourceVersion with the same selector.
      await expect.poll(() => requests, { timeout: 10_000, interval: 50 }).toMatch(/GET \S+\/api\/v1\/pods\?fieldSelector=spec\.nodeName%21%3D&resourceVersion=\d+&watch=true 200 OK/);
      expect(requests).toMatch(/GET \S+\/api\/v1\/pods\?fieldSelector=spec\.nodeName%21%3D&limit=500 200 OK/);
      expect(out).toMatch(/^ADDED\s+kube-system\s+etcd-w1\s/m);
      expect(out).not.toContain('not-scheduled');
      await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'watched-pod' }, spec: { nodeName: 'w2', containers: [{ name: 'c', image: 'web' }] } } });
      await expect.poll(() => out, { timeout: 10_000, interval: 50 }).toMatch(/^ADDED\s+default\s+watched-pod\s/m);
      expect((await kubectl(['delete', 'pod', 'watched-pod', '--grace-period=0', '--force'])).code).toBe(0);
      await expect.poll(() => out, { timeout: 10_000, interval: 50 }).toMatch(/^DELETED\s+default\s+watched-pod\s/m);
      expect(out).not.toContain('not-scheduled');
    } finally {
      child.kill();
      await core.deleteNamespacedPod({ namespace: 'default', name: 'not-scheduled' });
    }
  });

  it('certificate approve / deny record the decision; the signer issues only the approved one', async () => {
    const token = sim.createBootstrapToken({ id: 'abcdef', secret: '0123456789abcdef', extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfigFor({ token }, 'bootstrap'));
    const byToken = await csr('node-csr-token', kc.makeApiClient(CertificatesV1Api), 'system:node:w8');
    expect(byToken.spec).toMatchObject({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] });

    const nodeCert = await sim.issueClientCertificate('system:node:w9', ['system:nodes']);
    const kcCert = new KubeConfig();
    kcCert.loadFromString(sim.kubeconfigFor(nodeCert, 'w9'));
    const byCert = await csr('node-csr-cert', kcCert.makeApiClient(CertificatesV1Api), 'system:node:w9');
    expect(byCert.spec).toMatchObject({ username: 'system:node:w9', groups: ['system:nodes', 'system:authenticated'] });

    const approve = await kubectl(['certificate', 'approve', 'node-csr-token']);
    expect(approve.stdout).toContain('certificatesigningrequest.certificates.k8s.io/node-csr-token approved');
    const deny = await kubectl(['certificate', 'deny', 'node-csr-cert']);
    expect(deny.stdout).toContain('certificatesigningrequest.certificates.k8s.io/node-csr-cert denied');
    await sim.signingIdle();

    await expect
      .poll(async () => (await certificates.readCertificateSigningRequest({ name: 'node-csr-token' })).status, { timeout: 5000 })
      .toMatchObject({ conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by kubectl certificate approve.' }] });
    const signed = await certificates.readCertificateSigningRequest({ name: 'node-csr-token' });
    expect(Buffer.from(signed.status?.certificate ?? '', 'base64').toString()).toContain('BEGIN CERTIFICATE');
    const denied = await certificates.readCertificateSigningRequest({ name: 'node-csr-cert' });
    expect(denied.status?.conditions).toEqual([expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' })]);
    expect(denied.status?.certificate).toBeUndefined();
    expect((await kubectl(['certificate', 'approve', 'node-csr-cert'])).stderr).toContain('is already Denied');
  });

  it('create -f applies a manifest (server-side field validation probe via OpenAPI v3)', async () => {
    await writeFile(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-kubectl, namespace: default}\ndata: {k: v}\n');
    const run = await kubectl(['create', '-f', join(dir, 'cm.yaml')]);
    expect(run.code, run.stderr).toBe(0);
    expect((await core.readNamespacedConfigMap({ name: 'from-kubectl', namespace: 'default' })).data).toEqual({ k: 'v' });
  });

  it('create namespace / secret (protobuf bodies) work, and a bootstrap token Secret made by kubectl authenticates', async () => {
    expect((await kubectl(['create', 'namespace', 'team-a'])).code).toBe(0);
    expect((await core.readNamespace({ name: 'team-a' })).status?.phase).toBe('Active');
    const secret = await kubectl([
      'create', 'secret', 'generic', 'bootstrap-token-k8s0sm', '-n', 'kube-system', '--type', 'bootstrap.kubernetes.io/token',
      '--from-literal=token-id=k8s0sm', '--from-literal=token-secret=0123456789abcdef', '--from-literal=usage-bootstrap-authentication=true',
      // kubeadm's bindings let this group create CSRs; a token without it may not (RBAC).
      '--from-literal=auth-extra-groups=system:bootstrappers:kubeadm:default-node-token',
    ]);
    expect(secret.code, secret.stderr).toBe(0);
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfigFor({ token: 'k8s0sm.0123456789abcdef' }, 'bootstrap'));
    const created = await csr('node-csr-kubectl-token', kc.makeApiClient(CertificatesV1Api), 'system:node:w5');
    expect(created.spec?.username).toBe('system:bootstrap:k8s0sm');
    expect((await kubectl(['delete', 'namespace', 'team-a'])).code).toBe(0);
    expect(await exists(core.readNamespace({ name: 'team-a' }))).toBe(false);
  });

  it('create serviceaccount / create token (TokenRequest) issue a token that is the account until the account is deleted', async () => {
    expect((await kubectl(['create', 'namespace', 'ccos-scaler-bootstrap'])).code).toBe(0);
    const account = await kubectl(['create', 'serviceaccount', 'run-1', '-n', 'ccos-scaler-bootstrap']);
    expect(account.code, account.stderr).toBe(0);
    const tooShort = await kubectl(['create', 'token', 'run-1', '-n', 'ccos-scaler-bootstrap', '--duration=5m']);
    expect(tooShort.code).not.toBe(0);
    expect(tooShort.stderr).toContain('may not specify a duration less than 10 minutes');
    const issued = await kubectl(['create', 'token', 'run-1', '-n', 'ccos-scaler-bootstrap', '--duration=20m']);
    expect(issued.code, issued.stderr).toBe(0);
    const token = issued.stdout.trim();
    expect(token.split('.')).toHaveLength(3);

    const asAccount = join(dir, 'run-1.kubeconfig');
    await writeFile(asAccount, sim.kubeconfigFor({ token }, 'run-1'), { mode: 0o600 });
    const whoami = await kubectl(['--kubeconfig', asAccount, 'auth', 'whoami', '-o', 'json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect((JSON.parse(whoami.stdout) as { status: { userInfo: unknown } }).status.userInfo).toMatchObject({
      username: 'system:serviceaccount:ccos-scaler-bootstrap:run-1',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ccos-scaler-bootstrap', 'system:authenticated'],
    });
    // What a kubelet does with it: its client CSR carries the account as the requester. RBAC lets
    // the namespace's accounts create CSRs only once they are bound to system:node-bootstrapper.
    const binding = await kubectl(['create', 'clusterrolebinding', 'bootstrap-accounts-create-csrs', '--clusterrole=system:node-bootstrapper', '--group=system:serviceaccounts:ccos-scaler-bootstrap']);
    expect(binding.code, binding.stderr).toBe(0);
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfigFor({ token }, 'run-1'));
    const created = await csr('node-csr-service-account', kc.makeApiClient(CertificatesV1Api), 'system:node:w6');
    expect(created.spec).toMatchObject({ username: 'system:serviceaccount:ccos-scaler-bootstrap:run-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ccos-scaler-bootstrap', 'system:authenticated'] });

    expect((await kubectl(['delete', 'serviceaccount', 'run-1', '-n', 'ccos-scaler-bootstrap'])).code).toBe(0);
    const revoked = await kubectl(['--kubeconfig', asAccount, 'auth', 'whoami']);
    expect(revoked.code).not.toBe(0);
    expect(revoked.stderr).toContain('Unauthorized');
  });

  it('delete node removes the Node', async () => {
    const run = await kubectl(['delete', 'node', 'w3']);
    expect(run.stdout).toContain('node "w3" deleted');
    expect(await exists(core.readNode({ name: 'w3' }))).toBe(false);
  });
});
