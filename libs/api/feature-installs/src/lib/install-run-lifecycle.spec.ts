import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, AgentTokens, InstallRunEntity, InstallRunStore, type NodeEntity, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { ClusterAddressGuard, type KubeClient, createKubeClient } from '@ccos/api/data-access-kube';
import { BOOTSTRAP_IDENTITIES_RBAC } from '@ccos/api/data-access-kube/testing';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { message } from '@ccos/shared/messages';
// The cluster of these specs is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, generateCertificateRequest, startKubeSim } from '@ccos/tools/kube-sim';
import { UNOBSERVED_INSTALLS } from './install-metrics';
import { InstallProgress } from './install-progress';
import { InstallRunSweeper } from './install-run-sweeper';
import { type AgentControl, INSTALL_LAUNCH_TASK, InstallService } from './install.service';
import { RunBootstrapIdentities } from './run-bootstrap-identities';

const NAMESPACE = 'ccos-scaler-bootstrap';
const DEADLINE_MS = 90 * 60_000;
const logger = pino({ level: process.env['SPEC_LOG'] ?? 'silent' });
/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

/** The SSH side of an install, recorded: what the service would write into the agent's 0600 config. */
class RecordingAgent implements AgentControl {
  readonly launched: Array<{ runId: string; token: string; kubeletBootstrapToken: string | null; purpose: string; steps: string[] | null }> = [];
  readonly stopped: string[] = [];
  readonly channel = 'HTTPS' as const;
  async launch(_node: NodeEntity, run: InstallRunEntity, token: string, kubeletBootstrapToken: string | null): Promise<void> {
    this.launched.push({ runId: run.id, token, kubeletBootstrapToken, purpose: run.purpose, steps: run.steps });
  }
  async stop(_node: NodeEntity, run: InstallRunEntity): Promise<void> {
    this.stopped.push(run.id);
  }
}

describe('install runs: deadline, agent token and the run\'s own bootstrap identity', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let sim: KubeSim;
  let admin: KubeClient;
  let nodes: NodeStore;
  let agent: RecordingAgent;
  let identities: RunBootstrapIdentities;
  let installs: InstallService;
  let clusterId: string;
  let now = new Date();
  const tokens = (): AgentTokens => new AgentTokens(dataSource, () => now);

  beforeAll(async () => {
    database = await createTestDatabase('ccos_install_runs');
    dataSource = await openDatabase({ url: database.url, maxConnections: 5 });
    sim = await startKubeSim({ seed: BOOTSTRAP_IDENTITIES_RBAC });
    admin = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
    clusterId = randomUUID();
    await dataSource.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'sim', $2, '198.18.0.2', 'x', 'KUBECONFIG')`, [clusterId, sim.url]);
    nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    agent = new RecordingAgent();
    identities = new RunBootstrapIdentities(new InstallRunStore(dataSource), { clientFor: async () => admin }, NAMESPACE, logger);
    installs = service(agent, new RecordingJobs({ runWhenQueued: true }));
  });
  afterAll(async () => {
    admin?.close();
    await sim?.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  /** An install service whose launch jobs `jobs` runs. */
  const service = (control: AgentControl, jobs: RecordingJobs, issuer: RunBootstrapIdentities = identities) =>
    new InstallService(new InstallRunStore(dataSource), nodes, tokens(), control, issuer, new InstallProgress(createInProcessEventBus()), logger, DEADLINE_MS, UNOBSERVED_INSTALLS, jobs);

  let hosts = 0;
  const readyNode = async (hostname: string): Promise<string> => {
    const id = randomUUID();
    hosts += 1;
    await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'READY_TO_INSTALL')`, [id, clusterId, hostname, `198.18.0.${30 + hosts}`]);
    return id;
  };
  const runRow = (id: string): Promise<InstallRunEntity> => dataSource.getRepository(InstallRunEntity).findOneByOrFail({ id });
  const launchedFor = async (runId: string) => {
    await expect.poll(() => agent.launched.find((entry) => entry.runId === runId), { timeout: 5000 }).toBeDefined();
    return agent.launched.find((entry) => entry.runId === runId) as RecordingAgent['launched'][number];
  };
  /** Who the API server says filed a client CSR made with `token`, or the HTTP status it refused it with. */
  const fileCsrWith = async (token: string | null): Promise<string | number> => {
    if (token === null) {
      throw new Error('the run was given no bootstrap token');
    }
    const client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'TOKEN', token, caCert: sim.caCertPem } });
    try {
      const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:h', organizations: ['system:nodes'] });
      const created = await client.call('create csr', (o) =>
        client.certificates.createCertificateSigningRequest(
          { body: { metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } } },
          o,
        ),
      );
      return created.spec.username ?? '';
    } catch (error) {
      return (error as { statusCode?: number }).statusCode ?? -1;
    } finally {
      client.close();
    }
  };

  it('gives every run a deadline its agent token ends with, and mints its own identity before the agent starts', async () => {
    const started = Date.now();
    const run = await installs.install(await readyNode('w1'), 'operator');
    const launched = await launchedFor(run.id);
    const stored = await runRow(run.id);
    expect(stored.deadlineAt?.getTime()).toBeGreaterThanOrEqual(started + DEADLINE_MS);
    expect(stored.agentTokenExpiresAt).toEqual(stored.deadlineAt);
    expect(stored).toMatchObject({ bootstrapIdentity: `system:serviceaccount:${NAMESPACE}:run-${run.id}`, bootstrapIdentityRevokedAt: null });
    expect(stored.bootstrapIdentityUid).toMatch(/^[0-9a-f-]{36}$/);
    // The token the host gets files CSRs as the run's identity, and no one else's.
    expect(await fileCsrWith(launched.kubeletBootstrapToken)).toBe(stored.bootstrapIdentity);
    expect(launched.kubeletBootstrapToken).not.toBe(launched.token);
  });

  it('refuses a stalled run\'s agent token once its deadline passed', async () => {
    const nodeId = await readyNode('w2');
    const run = await installs.install(nodeId, 'operator');
    const { token } = await launchedFor(run.id);
    await nodes.transition(nodeId, 'AGENT_SILENT', message('node.agentSilent', { seconds: 120, since: 'then' }));
    now = new Date(Date.now() + DEADLINE_MS - 60_000);
    expect((await tokens().authenticate(token))?.id).toBe(run.id);
    now = new Date(Date.now() + DEADLINE_MS + 1000);
    expect(await tokens().authenticate(token)).toBeNull();
    now = new Date();
  });

  it('revokes the identity when the run ends: its token no longer authenticates', async () => {
    const run = await installs.install(await readyNode('w3'), 'operator');
    const { kubeletBootstrapToken } = await launchedFor(run.id);
    expect(typeof (await fileCsrWith(kubeletBootstrapToken))).toBe('string');
    await installs.finish(await runRow(run.id), 'SUCCEEDED', null, null);
    await expect.poll(async () => (await runRow(run.id)).bootstrapIdentityRevokedAt, { timeout: 5000 }).not.toBeNull();
    expect(await fileCsrWith(kubeletBootstrapToken)).toBe(401);
  });

  it('ends a run past its deadline, fails the node, stops the agent and revokes the identity', async () => {
    const nodeId = await readyNode('w4');
    const run = await installs.install(nodeId, 'operator');
    const { kubeletBootstrapToken } = await launchedFor(run.id);
    const deadline = (await runRow(run.id)).deadlineAt as Date;
    const sweeper = new InstallRunSweeper(new InstallRunStore(dataSource), nodes, installs, identities, logger, () => new Date(deadline.getTime() + 1));
    await sweeper.sweep();
    const ended = await runRow(run.id);
    expect(ended).toMatchObject({ status: 'FAILED', reason: `the install run passed its deadline (${deadline.toISOString()}); its agent token and bootstrap identity no longer work` });
    expect((await nodes.get(nodeId)).status).toBe('INSTALL_FAILED');
    await expect.poll(() => agent.stopped.includes(run.id)).toBe(true);
    await expect.poll(async () => fileCsrWith(kubeletBootstrapToken), { timeout: 5000 }).toBe(401);
  });

  it('revokes, on start, the identities of runs that ended while the service was down', async () => {
    const run = await installs.install(await readyNode('w5'), 'operator');
    const { kubeletBootstrapToken } = await launchedFor(run.id);
    // The agent's last report ended the run on a replica that died before it could revoke.
    await dataSource.query(`UPDATE install_runs SET status = 'SUCCEEDED', finished_at = now() WHERE id = $1`, [run.id]);
    expect(typeof (await fileCsrWith(kubeletBootstrapToken))).toBe('string');
    const restarted = new InstallRunSweeper(new InstallRunStore(dataSource), nodes, installs, new RunBootstrapIdentities(new InstallRunStore(dataSource), { clientFor: async () => admin }, NAMESPACE, logger), logger);
    await restarted.start(60_000);
    await restarted.stop();
    expect((await runRow(run.id)).bootstrapIdentityRevokedAt).not.toBeNull();
    expect(await fileCsrWith(kubeletBootstrapToken)).toBe(401);
  });

  it('fails the run before anything runs on the host when no identity can be minted, saying what to set up', async () => {
    const broken = new RunBootstrapIdentities(new InstallRunStore(dataSource), { clientFor: async () => admin }, 'no-such-namespace', logger);
    const withoutNamespace = service(agent, new RecordingJobs({ runWhenQueued: true }), broken);
    const nodeId = await readyNode('w6');
    const run = await withoutNamespace.install(nodeId, 'operator');
    await expect.poll(async () => (await runRow(run.id)).status, { timeout: 5000 }).toBe('FAILED');
    expect((await runRow(run.id)).reason).toBe(
      'could not mint the run\'s bootstrap identity: namespace no-such-namespace does not exist in the cluster; create it with the deployment\'s RBAC (the service needs, in namespace no-such-namespace: create, get and delete on serviceaccounts and create on serviceaccounts/token; and a ClusterRoleBinding of system:node-bootstrapper to the group system:serviceaccounts:no-such-namespace; `ccos-scaler clusters prepare` prints the manifest, `ccos-scaler clusters check` what else is missing)',
    );
    // The node follows its run.
    await expect.poll(async () => (await nodes.get(nodeId)).status, { timeout: 5000 }).toBe('INSTALL_FAILED');
    expect(agent.launched.some((entry) => entry.runId === run.id)).toBe(false);
  });

  it('starts an apply run on a joined node without an identity or an install slot, once, and refuses one on a node that has not joined', async () => {
    const nodeId = await readyNode('w-apply');
    await expect(installs.apply(nodeId, ['APPLY_IGNITION', 'START_KUBELET'], 'rollout:r1')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', message: 'node w-apply is READY_TO_INSTALL; a rollout applies to JOINED nodes only' });
    await dataSource.query(`UPDATE nodes SET status = 'JOINED' WHERE id = $1`, [nodeId]);
    const run = await installs.apply(nodeId, ['APPLY_IGNITION', 'START_KUBELET'], 'rollout:r1');
    expect(await launchedFor(run.id)).toMatchObject({ kubeletBootstrapToken: null, purpose: 'APPLY', steps: ['APPLY_IGNITION', 'START_KUBELET'] });
    expect(await runRow(run.id)).toMatchObject({ purpose: 'APPLY', startStep: 'APPLY_IGNITION', bootstrapIdentity: null, requestedBy: 'rollout:r1' });
    expect((await runRow(run.id)).admittedAt).not.toBeNull();
    // The rollout's job started again: the same run, no second agent.
    expect((await installs.apply(nodeId, ['APPLY_IGNITION', 'START_KUBELET'], 'rollout:r1')).id).toBe(run.id);
    expect(agent.launched.filter((entry) => entry.runId === run.id)).toHaveLength(1);
    // Not an install to cancel from the node page: its rollout owns it.
    await expect(installs.cancel(nodeId, 'operator')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION' });
    expect((await nodes.get(nodeId)).status).toBe('JOINED');
  });

  it('starts the agent in a durable job whose payload holds no token; the next attempt after a dead worker stops what it may have started and launches with a new token, once', async () => {
    now = new Date();
    /** A worker that took the launch job and died while connecting to the host. */
    class DyingAgent extends RecordingAgent {
      override launch(node: NodeEntity, run: InstallRunEntity, token: string, kubeletBootstrapToken: string | null): Promise<void> {
        void super.launch(node, run, token, kubeletBootstrapToken);
        return new Promise(() => undefined);
      }
    }
    const dyingAgent = new DyingAgent();
    const [first, next] = [new RecordingJobs(), new RecordingJobs()];
    const dying = service(dyingAgent, first);
    // Another worker's process: its service registers the launch task with that worker.
    service(agent, next);
    const run = await dying.install(await readyNode('w8'), 'operator');
    const job = first.queued.find((queued) => queued.task === INSTALL_LAUNCH_TASK);
    expect(job?.options).toMatchObject({ key: `${INSTALL_LAUNCH_TASK}:${run.id}`, queue: `host:198.18.0.${30 + hosts}`, maxAttempts: 3 });
    expect(job?.payload).toEqual({ runId: run.id, nodeId: run.nodeId, hostname: 'w8' });
    expect((await runRow(run.id)).agentLaunchedAt).toBeNull();

    void first.run(INSTALL_LAUNCH_TASK, job?.payload ?? {});
    await expect.poll(() => dyingAgent.launched.length).toBe(1);
    const before = await runRow(run.id);
    // The job engine gives the dead worker's job to another worker: its second attempt.
    await next.run(INSTALL_LAUNCH_TASK, job?.payload ?? {}, { attempt: 2 });
    const relaunched = await launchedFor(run.id);
    const after = await runRow(run.id);
    expect(after.agentLaunchedAt).not.toBeNull();
    expect(after.agentTokenHash).not.toBe(before.agentTokenHash);
    expect((await tokens().authenticate(relaunched.token))?.id).toBe(run.id);
    expect(await tokens().authenticate(dyingAgent.launched[0].token)).toBeNull();
    // An agent the dead worker may have started holds the old token: stopped before the new one starts.
    expect(agent.stopped).toContain(run.id);
    await next.run(INSTALL_LAUNCH_TASK, job?.payload ?? {}, { attempt: 3 });
    expect(agent.launched.filter((entry) => entry.runId === run.id)).toHaveLength(1);
  });

  it('never starts again the agent of a run that reported, though the worker that started it died before recording the start', async () => {
    now = new Date();
    let reachedHost = (): void => undefined;
    const startedOnHost = new Promise<void>((resolve) => (reachedHost = resolve));
    class DiesAfterStartingAgent extends RecordingAgent {
      override launch(): Promise<void> {
        reachedHost();
        return new Promise(() => undefined);
      }
    }
    const [first, next] = [new RecordingJobs({ runWhenQueued: true }), new RecordingJobs()];
    const dying = service(new DiesAfterStartingAgent(), first);
    service(agent, next);
    const run = await dying.install(await readyNode('w10'), 'operator');
    await startedOnHost;
    // Its agent started on the host and reported, then its worker died.
    await new InstallRunStore(dataSource).heardFrom(run.id, new Date());
    await next.run(INSTALL_LAUNCH_TASK, { runId: run.id }, { attempt: 2 });
    expect(agent.stopped).not.toContain(run.id);
    expect(agent.launched.some((entry) => entry.runId === run.id)).toBe(false);
    expect((await runRow(run.id)).agentLaunchedAt).not.toBeNull();
  });

  it('does not start the agent from a job this worker lost (another worker was given it): the run waits for that one', async () => {
    now = new Date();
    const jobs = new RecordingJobs();
    const slow = service(agent, jobs);
    const run = await slow.install(await readyNode('w13'), 'operator');
    const before = await runRow(run.id);
    const lost = new AbortController();
    lost.abort();
    await jobs.run(INSTALL_LAUNCH_TASK, { runId: run.id }, { lost: lost.signal });
    expect(agent.launched.some((entry) => entry.runId === run.id)).toBe(false);
    expect(await runRow(run.id)).toMatchObject({ status: 'RUNNING', agentLaunchedAt: null, agentTokenHash: before.agentTokenHash });
    // The worker that has it now starts it.
    await jobs.run(INSTALL_LAUNCH_TASK, { runId: run.id }, { attempt: 2 });
    await launchedFor(run.id);
  });

  it('queues again, at start, the launch of every run whose agent was never started, and leaves the rest', async () => {
    now = new Date();
    const jobs = new RecordingJobs();
    const queueing = service(agent, jobs);
    const waiting = await queueing.install(await readyNode('w11'), 'operator');
    const started = await installs.install(await readyNode('w12'), 'operator');
    await launchedFor(started.id);
    jobs.queued.length = 0;
    expect(await queueing.resumeLaunches()).toBeGreaterThanOrEqual(1);
    const runIds = jobs.queued.filter((job) => job.task === INSTALL_LAUNCH_TASK).map((job) => job.payload['runId']);
    expect(runIds).toContain(waiting.id);
    expect(runIds).not.toContain(started.id);
  });
});
