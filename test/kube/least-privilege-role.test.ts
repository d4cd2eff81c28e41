import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import {
  ClusterAddressGuard,
  approveCsr,
  cordonNode,
  createKubeClient,
  deleteNode,
  drainDeadNode,
  drainNode,
  listCsrs,
  listNodes,
  mayFileCsrs,
  readApiServiceAddresses,
  readClusterVersion,
  mintBootstrapIdentity,
  revokeBootstrapIdentity,
  startLeaderElection,
  uncordonNode,
  watchCsrs,
  watchNodes,
  watchPods,
  type DrainResult,
  type KubeClient,
} from '@ccos/api/data-access-kube';
import { SHIPPED_SERVICE_ACCOUNT, shippedRbacFiles } from '@ccos/api/data-access-kube/testing';
import { eventually } from '@ccos/shared/util-timing/testing';
import { KUBERNETES_SERVICE_IP, generateCertificateRequest, startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';

/**
 * deploy/base/rbac holds what the product ships for every cluster: the service's account, its
 * ClusterRole, the Lease Role, the bootstrap identities' namespace, Role and ClusterRoleBinding, and
 * the bindings to the account. Applied to kube-sim as they are, the account (with a TokenRequest
 * token, as an operator registers it) must be able to do every Kubernetes operation of the product
 * (inventory and its watch, the pod cache's watch, cordon, drain, dead-node drain, node deletion, CSR list, watch and
 * approval on both kubelet signers, reading the cluster's release (ClusterVersion, else /version), leader election, minting a run's bootstrap identity and its
 * token, re-minting it after a crash, the identity filing CSRs, revoking it), and taking away any
 * one verb, signer name or binding must make one of them fail with 403 Forbidden naming it: no
 * rule is missing, none is dead weight.
 */

const LOOPBACK = ClusterAddressGuard.allowing('loopback');
const SERVICE_USER = `system:serviceaccount:${SHIPPED_SERVICE_ACCOUNT.namespace}:${SHIPPED_SERVICE_ACCOUNT.name}`;
const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';
const ADMIN = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };
const RS_UID = 'e1f0c7e2-0000-4000-8000-0000000000a1';
const DB_RS_UID = 'e1f0c7e2-0000-4000-8000-0000000000a2';
const DS_UID = 'e1f0c7e2-0000-4000-8000-0000000000d5';
const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true}]`;
const ready = '{phase: Running, conditions: [{type: Ready, status: "True"}]}';
const node = (name: string) => `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}}\nstatus: {conditions: [{type: Ready, status: "True"}]}`;

/** w1 is drained (a ReplicaSet pod under a budget, a DaemonSet pod), w2 is dead and drained by deletion, w3 deleted, w4 cordoned and uncordoned. */
const SEED = [
  node('w1'),
  node('w2'),
  node('w3'),
  node('w4'),
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: web}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db, namespace: shop, uid: ${DB_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}`,
  `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}`,
  `apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}, ownerReferences: ${owner('ReplicaSet', 'web', RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 0, containers: [{name: c, image: web}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: agent-w1, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'agent', DS_UID)}}
spec: {nodeName: w1, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: db-1, namespace: shop, labels: {app: db}, ownerReferences: ${owner('ReplicaSet', 'db', DB_RS_UID)}}
spec: {nodeName: w2, containers: [{name: c, image: db}]}
status: ${ready}`,
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-budget, namespace: shop}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}`,
].join('\n---\n');

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

/** One product operation's outcome: undefined when it succeeded, else what failed. */
type Outcomes = Record<string, string | undefined>;

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The CSRs the approver decides on: a kubelet client CSR from a bootstrap token, a serving CSR from the node. */
async function createCsrs(sim: KubeSim): Promise<void> {
  const csrs = sim.resource('certificatesigningrequests');
  const client = await generateCertificateRequest({ commonName: 'system:node:w5', organizations: ['system:nodes'] });
  sim.api.create(
    csrs,
    undefined,
    { metadata: { name: 'client-csr' }, spec: { request: Buffer.from(client.csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } },
    { user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] } },
  );
  const serving = await generateCertificateRequest({ commonName: 'system:node:w4', organizations: ['system:nodes'], dnsNames: ['w4'] });
  sim.api.create(
    csrs,
    undefined,
    { metadata: { name: 'serving-csr' }, spec: { request: Buffer.from(serving.csrPem).toString('base64'), signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] } },
    { user: { username: 'system:node:w4', groups: ['system:nodes', 'system:authenticated'] } },
  );
}

function failureOf(result: DrainResult): string | undefined {
  return result.ok ? undefined : [result.reason, ...result.blocking.map((pod) => pod.message)].join(' | ');
}

/** Runs every Kubernetes operation the product performs, as the identity of `kubeconfig`. */
async function productOperations(sim: KubeSim, client: KubeClient): Promise<Outcomes> {
  const outcomes: Outcomes = {};
  const run = async (name: string, operation: () => Promise<string | undefined>): Promise<void> => {
    try {
      outcomes[name] = await operation();
    } catch (error) {
      outcomes[name] = describeError(error);
    }
  };

  await run('list nodes', async () => ((await listNodes(client)).length === 4 ? undefined : 'wrong node count'));
  await run('read the kubernetes Service', async () => ((await readApiServiceAddresses(client)).includes(KUBERNETES_SERVICE_IP) ? undefined : 'no ClusterIP'));
  await run('watch nodes', async () => {
    const errors: string[] = [];
    let synced = false;
    let changed = false;
    const inventory = watchNodes(client, (event) => (changed ||= event.type === 'MODIFIED' && event.node.name === 'w4' && event.node.unschedulable), {
      onError: (error) => errors.push(error.message),
      initialBackoffMs: 50,
      maxBackoffMs: 100,
    });
    void inventory.synced.then(() => (synced = true));
    try {
      await eventually(() => errors[0] ?? (synced ? true : undefined), 5000, 'node inventory sync');
      if (errors[0]) {
        return errors[0];
      }
      sim.api.patch(sim.resource('nodes'), undefined, 'w4', 'application/merge-patch+json', { spec: { unschedulable: true } }, { user: ADMIN });
      await eventually(() => errors[0] ?? (changed ? true : undefined), 5000, 'node watch event');
      sim.api.patch(sim.resource('nodes'), undefined, 'w4', 'application/merge-patch+json', { spec: { unschedulable: null } }, { user: ADMIN });
      return errors[0];
    } finally {
      await inventory.stop();
    }
  });
  await run('watch pods', async () => {
    const errors: string[] = [];
    let synced = false;
    let added = false;
    const pods = watchPods(client, (event) => (added ||= event.type === 'ADDED' && event.object.metadata?.name === 'late-pod'), {
      onError: (error) => errors.push(error.message),
      initialBackoffMs: 50,
      maxBackoffMs: 100,
    });
    void pods.synced.then(() => (synced = true));
    try {
      await eventually(() => errors[0] ?? (synced ? true : undefined), 5000, 'pod cache sync');
      if (errors[0]) {
        return errors[0];
      }
      if (pods.podsOnNode('w1').length !== 2) {
        return `w1 has ${pods.podsOnNode('w1').length} pods in the cache`;
      }
      sim.api.create(sim.resource('pods'), 'shop', { metadata: { name: 'late-pod' }, spec: { nodeName: 'w4', containers: [{ name: 'c', image: 'late' }] } }, { user: ADMIN });
      await eventually(() => errors[0] ?? (added ? true : undefined), 5000, 'pod watch event');
      sim.api.delete(sim.resource('pods'), 'shop', 'late-pod', { gracePeriodSeconds: 0, user: ADMIN });
      return errors[0];
    } finally {
      await pods.stop();
    }
  });
  await run('read the cluster version', async () => {
    const reading = await readClusterVersion(client);
    return reading.source === 'SERVER_VERSION' && reading.version === '1.32.0-kube-sim' ? undefined : `unexpected ${JSON.stringify(reading)}`;
  });
  await run('list csrs', async () => ((await listCsrs(client)).length === 2 ? undefined : 'wrong CSR count'));
  await run('watch csrs', async () => {
    const errors: string[] = [];
    let synced = false;
    let added = false;
    const watch = watchCsrs(client, (event) => (added ||= event.type === 'ADDED' && event.csr.name === 'late-csr'), { onError: (error) => errors.push(error.message), initialBackoffMs: 50, maxBackoffMs: 100 });
    void watch.synced.then(() => (synced = true));
    try {
      await eventually(() => errors[0] ?? (synced ? true : undefined), 5000, 'CSR watch sync');
      if (errors[0]) {
        return errors[0];
      }
      const late = await generateCertificateRequest({ commonName: 'system:node:w6', organizations: ['system:nodes'] });
      sim.api.create(
        sim.resource('certificatesigningrequests'),
        undefined,
        { metadata: { name: 'late-csr' }, spec: { request: Buffer.from(late.csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } },
        { user: ADMIN },
      );
      await eventually(() => errors[0] ?? (added ? true : undefined), 5000, 'CSR watch event');
      return errors[0];
    } finally {
      await watch.stop();
    }
  });
  await run('cordon and uncordon', async () => {
    await cordonNode(client, 'w4');
    await uncordonNode(client, 'w4');
    return undefined;
  });
  await run('drain', async () => failureOf(await drainNode(client, 'w1', { ignoreDaemonSets: true, timeoutSeconds: 10, pollIntervalMs: 50, retryIntervalMs: 100 })));
  await run('drain a dead node', async () => failureOf(await drainDeadNode(client, 'w2', { ignoreDaemonSets: true })));
  await run('delete node', async () => {
    const result = await deleteNode(client, 'w3');
    return result.ok ? undefined : result.reason.message;
  });
  for (const csr of ['client-csr', 'serving-csr']) {
    await run(`approve ${csr}`, async () => {
      const result = await approveCsr(client, csr);
      return result.ok ? undefined : result.reason;
    });
  }
  // An install run's own bootstrap identity: minted, minted again by a service that crashed after
  // creating the account (409, then read), checked to be able to file CSRs, revoked.
  const expiresAt = new Date(Date.now() + 3600_000);
  await run('mint a run identity', async () => {
    const identity = await mintBootstrapIdentity(client, { namespace: BOOTSTRAP_NAMESPACE, name: 'run-1', expiresAt });
    const asIdentity = client.withToken(identity.token);
    try {
      const access = await mayFileCsrs(asIdentity);
      return access.verdict === 'allowed' ? undefined : `the run identity may not create certificatesigningrequests (${access.verdict}: ${access.reason ?? ''})`;
    } finally {
      asIdentity.close();
    }
  });
  await run('mint a run identity whose account exists', async () => {
    sim.api.create(sim.resource('serviceaccounts'), BOOTSTRAP_NAMESPACE, { metadata: { name: 'run-2' } }, { user: ADMIN });
    const identity = await mintBootstrapIdentity(client, { namespace: BOOTSTRAP_NAMESPACE, name: 'run-2', expiresAt });
    return identity.uid === sim.store.get(sim.resource('serviceaccounts'), BOOTSTRAP_NAMESPACE, 'run-2')?.metadata.uid ? undefined : 'not the existing account';
  });
  await run('revoke a run identity', async () => {
    const uid = sim.store.get(sim.resource('serviceaccounts'), BOOTSTRAP_NAMESPACE, 'run-1')?.metadata.uid ?? sim.api.create(sim.resource('serviceaccounts'), BOOTSTRAP_NAMESPACE, { metadata: { name: 'run-1' } }, { user: ADMIN }).metadata.uid;
    return (await revokeBootstrapIdentity(client, { namespace: BOOTSTRAP_NAMESPACE, name: 'run-1', uid })) ? undefined : 'nothing was revoked';
  });
  await run('leader election', async () => {
    const errors: string[] = [];
    let renewals = 0;
    const elector = startLeaderElection(client, {
      namespace: 'kube-system',
      name: 'ccos-scaler-csr-approver',
      identity: 'replica-1',
      leaseDurationSeconds: 3,
      renewDeadlineSeconds: 2,
      retryPeriodSeconds: 0.2,
      onStartedLeading: () => undefined,
      onError: (error) => errors.push(error.message),
    });
    const lease = (): Record<string, unknown> | undefined => sim.store.get(sim.resource('leases'), 'kube-system', 'ccos-scaler-csr-approver')?.spec;
    try {
      const first = await eventually(() => errors[0] ?? (elector.isLeader ? String(lease()?.['renewTime']) : undefined), 5000, 'leadership');
      if (errors[0]) {
        return errors[0];
      }
      await eventually(() => errors[0] ?? (String(lease()?.['renewTime']) !== first ? (renewals += 1) : undefined), 5000, 'lease renewal');
      if (errors[0]) {
        return errors[0];
      }
    } finally {
      await elector.stop();
    }
    return errors[0] ?? (lease()?.['holderIdentity'] ? 'the lease was not released' : undefined);
  });
  return outcomes;
}

/** A cluster with `manifests` applied (by the cluster admin) and the product acting as the shipped account. */
async function runAs(manifests: Manifest[]): Promise<Outcomes> {
  const sim = await startKubeSim({ seed: [SEED, ...manifests.map((m) => stringify(m))].join('\n---\n'), admin: false });
  const client = await (async () => {
    await createCsrs(sim);
    const token = sim.requestServiceAccountToken(SHIPPED_SERVICE_ACCOUNT.namespace, SHIPPED_SERVICE_ACCOUNT.name, { expirationSeconds: 3600 });
    return createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfigFor({ token }) }, requestTimeoutMs: 5000 });
  })();
  try {
    return await productOperations(sim, client);
  } finally {
    client.close();
    await sim.stop();
  }
}

/**
 * What a Forbidden for a removed permission says: the verb and resource, or the signer name. A
 * refused watch is only "HTTP 403" to the product: client-node's Watch drops the Status body.
 */
function forbiddenFor(rule: Rule, verb: string, signer?: string): RegExp {
  if (verb === 'watch') {
    return new RegExp(`^watch /\\S*${rule.resources[0]}: HTTP 403$`);
  }
  if (signer) {
    return new RegExp(`user not permitted to approve requests with signerName "${signer.replace(/[./]/g, '\\$&')}"`);
  }
  return new RegExp(`is forbidden: User "${SERVICE_USER}" cannot ${verb} resource "${rule.resources[0].replace('/', '\\/')}" in API group "${rule.apiGroups[0]}"`);
}

/** What a missing binding looks like: the account is refused (a watch only as HTTP 403), or the run identities may not file CSRs. */
function forbiddenWithout(binding: Manifest): RegExp {
  return binding.subjects?.some((subject) => subject.kind === 'Group')
    ? /the run identity may not create certificatesigningrequests \(denied/
    : new RegExp(`is forbidden: User "${SERVICE_USER}" cannot`);
}

describe('the shipped least-privilege RBAC (deploy/base/rbac) against kube-sim RBAC', () => {
  let manifests: Manifest[];
  const isRole = (m: Manifest) => m.kind === 'ClusterRole' || m.kind === 'Role';
  const isBinding = (m: Manifest) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding';

  beforeAll(async () => {
    manifests = [];
    for (const file of shippedRbacFiles()) {
      manifests.push(...parseAllDocuments(await readFile(file, 'utf8')).map((doc) => doc.toJSON() as Manifest));
    }
    expect(shippedRbacFiles().map((file) => basename(file))).toEqual(['service-account.yaml', 'cluster-role.yaml', 'role.yaml', 'bootstrap-identities.yaml', 'bindings.yaml']);
    expect(manifests.filter((m) => isRole(m) || isBinding(m)).map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`)).toEqual([
      'ClusterRole//ccos-scaler',
      'Role/kube-system/ccos-scaler',
      'Role/default/ccos-scaler-api-service',
      'ClusterRoleBinding//ccos-scaler-bootstrap-node-bootstrapper',
      `Role/${BOOTSTRAP_NAMESPACE}/ccos-scaler-bootstrap-identities`,
      'ClusterRoleBinding//ccos-scaler',
      'RoleBinding/kube-system/ccos-scaler',
      'RoleBinding/default/ccos-scaler-api-service',
      `RoleBinding/${BOOTSTRAP_NAMESPACE}/ccos-scaler-bootstrap-identities`,
    ]);
  });

  it('lets every product operation succeed', async () => {
    const outcomes = await runAs(manifests);
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(outcomes).map((op) => [op, undefined])));
    expect(Object.keys(outcomes)).toHaveLength(17);
  });

  it('without the roles and bindings, the product cannot even list nodes', async () => {
    const outcomes = await runAs(manifests.filter((m) => !isRole(m) && !isBinding(m)));
    expect(outcomes['list nodes']).toContain(`nodes is forbidden: User "${SERVICE_USER}" cannot list resource "nodes" in API group "" at the cluster scope`);
    expect(Object.values(outcomes).every((outcome) => outcome !== undefined)).toBe(true);
  });

  /** Every reduction of the shipped RBAC by one verb, one signer name (resource name) or one binding. */
  const reductions = (): { label: string; manifests: Manifest[]; expected: RegExp }[] => {
    const out: { label: string; manifests: Manifest[]; expected: RegExp }[] = [];
    manifests.forEach((manifest, m) => {
      if (isBinding(manifest)) {
        out.push({ label: `without ${manifest.kind} ${manifest.metadata.name}`, manifests: manifests.filter((_, i) => i !== m), expected: forbiddenWithout(manifest) });
      }
      (manifest.rules ?? []).forEach((rule, r) => {
        const replaceRule = (replacement: Rule | undefined): Manifest[] =>
          manifests.map((other, i) => (i !== m ? other : { ...other, rules: (other.rules ?? []).flatMap((x, j) => (j !== r ? [x] : replacement ? [replacement] : [])) }));
        for (const verb of rule.verbs) {
          const rest = rule.verbs.filter((v) => v !== verb);
          out.push({
            label: `${manifest.kind} ${manifest.metadata.name} without ${verb} on ${rule.resources.join(',')}${rule.resourceNames ? ` (${rule.resourceNames.join(',')})` : ''}`,
            manifests: replaceRule(rest.length > 0 ? { ...rule, verbs: rest } : undefined),
            expected: rule.resources[0] === 'signers' ? forbiddenFor(rule, verb, rule.resourceNames?.[0]) : forbiddenFor(rule, verb),
          });
        }
        if (rule.resources[0] === 'signers') {
          for (const signer of rule.resourceNames ?? []) {
            out.push({
              label: `${manifest.kind} without signer ${signer}`,
              manifests: replaceRule({ ...rule, resourceNames: (rule.resourceNames ?? []).filter((n) => n !== signer) }),
              expected: forbiddenFor(rule, 'approve', signer),
            });
          }
        }
      });
    });
    return out;
  };

  it('fails some product operation with Forbidden for every verb, signer or binding taken away', async () => {
    const cases = reductions();
    // 22 verbs and 2 signer names in the service's roles, 4 verbs in the bootstrap Role, 5 bindings.
    expect(cases.length).toBe(33);
    for (const reduction of cases) {
      const outcomes = await runAs(reduction.manifests);
      const failures = Object.entries(outcomes).filter(([, outcome]) => outcome !== undefined);
      expect(failures.length, `${reduction.label}: every operation succeeded`).toBeGreaterThan(0);
      expect(
        failures.some(([, outcome]) => reduction.expected.test(outcome ?? '')),
        `${reduction.label}: no Forbidden naming it among ${JSON.stringify(failures)}`,
      ).toBe(true);
    }
  }, 600_000);
});
