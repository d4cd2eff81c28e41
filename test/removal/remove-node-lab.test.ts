import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, type KubeClient, ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { generateCertificateRequest } from '@ccos/tools/kube-sim';
import { type ScaleOutWorld, approveUntilSettled, startScaleOutWorld } from '../support/scale-out-world';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

/**
 * Removal of a host the real agent installed on a lab host (sshd in a namespace, stand-in
 * kubelet that registers its Node again if it is deleted while running): the service stops the
 * kubelet over SSH before it deletes the Node, denies the node's leftover CSRs, revokes its
 * agent token and cleans the host; the same host can then be added and installed afresh.
 */

const WORKER_LABEL = [{ key: 'node-role.kubernetes.io/worker', value: '' }];
const RUN = 'id status phase reason nodeStatus events { seq kind message }';

interface RunView {
  id: string;
  status: string;
  phase: string;
  reason: string | null;
  nodeStatus: string;
  events: Array<{ seq: number; kind: string; message: string }>;
}

describe('removing a node the agent installed on a lab host', () => {
  let world: ScaleOutWorld;
  let kube: KubeClient;
  let nodeId: string;

  const install = async (id: string, force = false): Promise<string[]> => {
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000);
    const started = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id });
    expect(started.errors).toBeUndefined();
    const settle = force ? approveForcedUntilJoined(id) : approveUntilSettled(world, [id], ['JOINED', 'INSTALL_FAILED', 'STALLED'], 240_000);
    const { statuses, approved } = await settle.catch(async (error: unknown) => {
      const runs = await world.gql('query($id: ID!) { node(id: $id) { status statusReason installRuns { status reason events { step status message } } } }', { id });
      throw new Error(`${String(error)}\n${JSON.stringify(runs.data).slice(-4000)}`);
    });
    expect(statuses[id]).toBe('JOINED');
    return approved;
  };

  /**
   * The operator approving with force: a host installed again within minutes of its first
   * install has that install's approved CSRs inside the policy's clock-skew allowance, so the
   * policy leaves the new ones to an operator ("first-of-install").
   */
  const approveForcedUntilJoined = async (id: string): Promise<{ statuses: Record<string, string>; approved: string[] }> => {
    const approved: string[] = [];
    const deadline = Date.now() + 240_000;
    for (;;) {
      const status = (await world.gql<{ node: { status: string } }>('query($id: ID!) { node(id: $id) { status } }', { id })).data?.node.status ?? '';
      if (['JOINED', 'INSTALL_FAILED', 'STALLED'].includes(status)) {
        return { statuses: { [id]: status }, approved };
      }
      const pending = await world.gql<{ csrs: Array<{ name: string }> }>('query($c: ID!) { csrs(clusterId: $c, pendingOnly: true) { name } }', { c: world.clusterId });
      for (const csr of pending.data?.csrs ?? []) {
        const result = await world.gql('mutation($c: ID!, $n: String!, $r: String) { approveCsr(clusterId: $c, name: $n, force: true, reason: $r) { name } }', {
          c: world.clusterId,
          n: csr.name,
          r: 'h1 was removed and is installed again from scratch minutes later',
        });
        if (!result.errors) {
          approved.push(csr.name);
        }
      }
      if (Date.now() > deadline) {
        throw new Error(`node ${id} is ${status}; approved ${approved.join(', ')}`);
      }
      await new Promise((wake) => setTimeout(wake, 300));
    }
  };

  const node = async (name: string) => {
    try {
      return await kube.call('read node', (o) => kube.core.readNode({ name }, o));
    } catch {
      return null;
    }
  };

  /** A command on the host; a non-zero exit is a result here, not an error. */
  const onHost = async (argv: string[]) => world.lab.exec('h1', argv).catch((error: { result?: { stdout: string; stderr: string; code: number | null } }) => {
    if (!error.result) {
      throw error;
    }
    return error.result;
  });

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 1 });
    kube = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: world.sim.kubeconfig } });
    // Another worker, so h1 is not the last one.
    world.sim.api.seed(world.sim.resource('nodes'), {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'spare', labels: { 'node-role.kubernetes.io/worker': '' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    nodeId = await world.addHost(0, { labels: WORKER_LABEL });
    await install(nodeId);
  }, 420_000);
  afterAll(async () => {
    kube?.close();
    await world?.stop();
  });

  it('stops the kubelet over SSH before deleting the Node, denies a leftover CSR, revokes the token and cleans the host; the Node stays gone', async () => {
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:h1', organizations: ['system:nodes'] });
    const leftover = await kube.call('create csr', (o) =>
      kube.certificates.createCertificateSigningRequest(
        {
          body: {
            metadata: { generateName: 'csr-' },
            spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
          },
        },
        o,
      ),
    );
    const csrName = leftover.metadata?.name ?? '';
    await expect
      .poll(async () => (await world.gql<{ csrs: Array<{ name: string }> }>('query($c: ID!) { csrs(clusterId: $c, pendingOnly: true) { name } }', { c: world.clusterId })).data?.csrs.map((c) => c.name), {
        timeout: 10_000,
      })
      .toContain(csrName);

    const preview = await world.gql<{ removalPreview: { allowed: boolean; host: { credentials: boolean; reachable: boolean | null; message: string } } }>(
      'query($n: ID!, $o: RemoveNodeInput) { removalPreview(nodeId: $n, options: $o) { allowed host { credentials reachable message } } }',
      { n: nodeId, o: { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, cleanHost: true } },
    );
    expect(preview.data?.removalPreview).toMatchObject({ allowed: true, host: { credentials: true, reachable: true } });
    const uid = (await node('h1'))?.metadata?.uid;
    expect(uid).toBeTruthy();

    const started = await world.gql<{ removeNode: { id: string } }>('mutation($n: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $n, options: $o) { id } }', {
      n: nodeId,
      o: { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, cleanHost: true },
    });
    expect(started.errors).toBeUndefined();
    let run: RunView | undefined;
    await expect
      .poll(
        async () => {
          run = (await world.gql<{ removalRuns: RunView[] }>(`query($n: ID!) { removalRuns(nodeId: $n) { ${RUN} } }`, { n: nodeId })).data?.removalRuns.at(-1);
          // The closing event is stored just before the run's final status: wait for both.
          return run?.status !== 'RUNNING' && run?.events.some((event) => event.kind === 'FINISHED');
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe(true);
    expect(run).toMatchObject({ status: 'SUCCEEDED', phase: 'DONE', nodeStatus: 'REMOVED' });
    const kinds = run?.events.map((event) => event.kind) ?? [];
    const order = ['CORDONED', 'DRAIN_FINISHED', 'KUBELET_STOPPED', 'NODE_DELETED', 'CSRS_DENIED', 'TOKENS_REVOKED', 'HOST_CLEANED', 'FINISHED'];
    expect(order.map((kind) => kinds.indexOf(kind))).toEqual([...order.map((kind) => kinds.indexOf(kind))].sort((a, b) => a - b));
    expect(order.every((kind) => kinds.includes(kind)), kinds.join(' ')).toBe(true);
    const message = (kind: string) => run?.events.find((event) => event.kind === kind)?.message;
    expect(message('KUBELET_STOPPED')).toMatch(/^kubelet stopped and disabled on /);
    expect(message('CSRS_DENIED')).toBe(`denied 1 pending CSR of h1: ${csrName}`);
    expect(message('TOKENS_REVOKED')).toBe('revoked 1 agent token');
    expect(message('HOST_CLEANED')).toContain('/opt/ccos-scaler');

    // The kubelet is stopped and disabled, so nothing on the host can bring the Node back (a restart of the host included).
    expect((await onHost(['systemctl', 'is-active', 'kubelet'])).stdout.trim()).not.toBe('active');
    expect((await onHost(['systemctl', 'is-enabled', 'kubelet'])).stdout.trim()).not.toBe('enabled');
    expect(await node('h1')).toBeNull();
    const records = (await world.gql<{ nodes: Array<{ id: string; hostname: string; status: string; origin: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname status origin } }', { c: world.clusterId })).data?.nodes;
    expect(records?.filter((record) => record.hostname === 'h1')).toEqual([{ id: nodeId, hostname: 'h1', status: 'REMOVED', origin: 'ADDED' }]);

    const csr = await kube.call('read csr', (o) => kube.certificates.readCertificateSigningRequest({ name: csrName }, o));
    expect(csr.status?.conditions?.map((condition) => condition.type)).toEqual(['Denied']);
    const db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    try {
      const tokens = (await db.query<{ agent_token_hash: string | null }>('SELECT agent_token_hash FROM install_runs WHERE node_id = $1', [nodeId])).rows;
      expect(tokens.length).toBeGreaterThan(0);
      expect(tokens.every((row) => row.agent_token_hash === null)).toBe(true);
    } finally {
      await db.end();
    }
    for (const path of ['/opt/ccos-scaler', '/etc/kubernetes/kubeconfig', '/var/lib/kubelet/pki', '/etc/systemd/system/kubelet.service']) {
      expect((await onHost(['test', '-e', path])).code, path).toBe(1);
    }
  }, 120_000);

  it('adds the removed host again as a new node that needs a fresh OS install, then installs it afresh with new certificates', async () => {
    // The removed machine may still hold certificates for the name: adding it again says so, and takes the ADMIN's acknowledgement.
    await expect(world.addHost(0, { labels: WORKER_LABEL })).rejects.toThrow(/OLD_CERTIFICATES_MAY_BE_VALID/);
    const again = await world.addHost(0, { labels: WORKER_LABEL, acknowledgeOldCertificates: true });
    expect(again).not.toBe(nodeId);
    // Never joined silently: the host's machine-id is the removed node's.
    await world.waitForStatus(again, ['READY_TO_INSTALL'], 120_000);
    const verdictOf = async () => (await world.gql<{ node: { hostVerdict: { verdict: string; reason: string; leftovers: Array<{ kind: string; item: string }> } | null } }>('query($id: ID!) { node(id: $id) { hostVerdict { verdict reason leftovers { kind item } } } }', { id: again })).data?.node.hostVerdict;
    const dirty = await verdictOf();
    expect(dirty).toMatchObject({ verdict: 'REINSTALL_REQUIRED', reason: 'this host was a node this service removed; it rejoins only after a fresh OS install' });
    expect(dirty?.leftovers.map((leftover) => leftover.kind)).toContain('REMOVED_MACHINE');
    const refused = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: again });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', verdict: 'REINSTALL_REQUIRED' });
    // A fresh OS install: a new machine-id, nothing of Kubernetes left; the service checks the host again.
    await world.lab.exec('h1', ['sh', '-c', 'od -An -N16 -tx1 /dev/urandom | tr -d " \\n" > /etc/machine-id && rm -rf /etc/kubernetes/* /var/lib/kubelet/*']);
    const recopied = await world.gql('mutation($id: ID!) { recopyAgent(nodeId: $id) { id } }', { id: again });
    expect(recopied.errors).toBeUndefined();
    await world.waitForStatus(again, ['READY_TO_INSTALL'], 120_000);
    await expect.poll(async () => (await verdictOf())?.verdict, { timeout: 60_000 }).toBe('CLEAN');
    const approved = await install(again, true);
    // Its certificates were removed with the host's kubelet files: the kubelet bootstrapped again (client, then serving CSR).
    expect(approved.length).toBeGreaterThanOrEqual(2);
    expect((await node('h1'))?.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');
    const records = (await world.gql<{ nodes: Array<{ id: string; hostname: string; status: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname status } }', { c: world.clusterId })).data?.nodes;
    expect(records?.filter((record) => record.hostname === 'h1').map((record) => [record.id, record.status])).toEqual(
      expect.arrayContaining([
        [nodeId, 'REMOVED'],
        [again, 'JOINED'],
      ]),
    );
  }, 420_000);
});
