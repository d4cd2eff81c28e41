/**
 * A simulated fleet: the agent launcher the API hands runs to when it runs with
 * AGENT_LAUNCHER_URL (libs/api/feature-installs launcher-agent-control.ts) instead of SSH.
 *
 * Each launch starts one simulated agent in this process. It is the real agent minus the host:
 * the real config parser, `InstallRunner`, `GraphqlApiClient` over the pinned HTTPS channel,
 * `Spool` (on a memory file system) and `EventSender` (batches, retries with backoff), and the real
 * DOWNLOAD_BINARIES step, which fetches the manifest and every binary and checks them against the
 * sha256 the launch carried. The other steps send the progress events a host's steps send without
 * running commands; START_KUBELET is a kubelet's TLS bootstrap in the cluster (kube-sim): a client
 * CSR filed with the run's own bootstrap token, the certificate awaited, the Node registered Ready
 * with it, then the service asked (agentRun) until it sees the Node Ready, as the real step does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ArtifactClient, EventSender, GraphqlApiClient, Spool, type EventSenderOptions, type StepEvent, type StepEventInput,
} from '@ccos/agent/data-access-api';
import {
  InstallRunner, RunControl, defaultStepRegistry, parseAgentConfig, statePaths, success,
  type AgentConfig, type RunOutcome, type StepContext, type StepHandler, type StepRegistry, type StepResult,
} from '@ccos/agent/feature-steps';
import { NodeHttp, SystemClock, type Http, type HttpRequest, type HttpResponse, type Logger } from '@ccos/agent/util-host';
import { FakeExecutor, FakeNetwork, FakeSystemInfo, MemoryFileSystem } from '@ccos/agent/util-host/testing';
import type { InstallStep } from '@ccos/shared/domain';
import { generateCertificateRequest } from '@ccos/tools/kube-sim';
import { KubeClient } from '@ccos/tools/lab';

/** The cluster's API server as a kubelet's bootstrap kubeconfig names it. */
export interface SimulatedClusterAccess {
  readonly server: string;
  readonly caPem: string;
}

/** PROGRESS events each simulated step sends (about what a lab host's steps send: 46 events an install with STARTED and SUCCEEDED). */
export const SIMULATED_PROGRESS: Readonly<Record<Exclude<InstallStep, 'DOWNLOAD_BINARIES'>, number>> = {
  PREFLIGHT: 6,
  INSTALL_PACKAGES: 12,
  INSTALL_SERVICES: 4,
  APPLY_IGNITION: 6,
  START_KUBELET: 4,
};

/** What one simulated agent saw. */
export interface SimulatedRun {
  readonly runId: string;
  readonly nodeName: string;
  readonly launchedAt: number;
  endedAt: number | null;
  outcome: RunOutcome | null;
  /** The sequence numbers its spool gave its events, in order. */
  readonly sentSeqs: number[];
  /** Milliseconds from creating the client CSR until its certificate was there. */
  csrApprovalMs: number | null;
  error: string | null;
}

export interface AgentRequestTimings {
  /** Milliseconds of each reportStep/reportSteps request. */
  readonly reportMs: number[];
  /** Events each request carried. */
  readonly eventsPerRequest: number[];
}

const QUIET_LOG: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** FLEET_AGENT_LOG=1: every agent's log on stderr (to see why a simulated install does not end). */
function agentLog(runId: string): Logger {
  if (!process.env['FLEET_AGENT_LOG']) {
    return QUIET_LOG;
  }
  const line = (level: string) => (text: string) => process.stderr.write(`[agent ${runId.slice(0, 8)}] ${level} ${text}\n`);
  return { debug: () => undefined, info: line('info'), warn: line('warn'), error: line('error') };
}

/** Times the agent's GraphQL posts that carry events. */
class TimedHttp implements Http {
  constructor(
    private readonly inner: Http,
    private readonly figures: AgentRequestTimings,
  ) {}

  async request(request: HttpRequest): Promise<HttpResponse> {
    const body = typeof request.body === 'string' ? request.body : '';
    const reporting = body.includes('mutation ReportStep');
    const started = performance.now();
    const response = await this.inner.request(request);
    if (reporting) {
      this.figures.reportMs.push(performance.now() - started);
      this.figures.eventsPerRequest.push((body.match(/"seq":/g) ?? []).length);
    }
    return response;
  }
}

/** The agent's sender, noting the sequence number its spool gave each event. */
class CountingSender extends EventSender {
  constructor(
    private readonly run: SimulatedRun,
    options: EventSenderOptions,
  ) {
    super(options);
  }

  override async report(input: StepEventInput): Promise<StepEvent> {
    const event = await super.report(input);
    this.run.sentSeqs.push(event.seq);
    return event;
  }
}

/** A step that reports its progress and succeeds without touching a host. */
class SimulatedStep implements StepHandler {
  constructor(
    readonly step: InstallStep,
    private readonly updates: number,
  ) {}

  validate(): [] {
    return [];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    for (let update = 1; update <= this.updates; update++) {
      await ctx.progress({ message: `simulated ${this.step}: ${update} of ${this.updates}`, progress: Math.round((update / this.updates) * 100) });
    }
    return success(`simulated ${this.step} done`);
  }
}

const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
/** How often the real START_KUBELET asks the service whether the Node is Ready (start-kubelet.step.ts). */
const KUBELET_POLL_INTERVAL_MS = 2_000;
/** How long a simulated kubelet waits for its certificate, then for its Node to be seen Ready, before its step fails. */
const KUBELET_WAIT_SECONDS = 120;
const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

interface CsrObject {
  metadata?: { name?: string };
  status?: { certificate?: string; conditions?: Array<{ type?: string; message?: string }> };
}

/** START_KUBELET as a kubelet's TLS bootstrap in the cluster, then the real step's wait through the service. */
class SimulatedKubeletStep implements StepHandler {
  readonly step = 'START_KUBELET' as const;

  constructor(
    private readonly cluster: SimulatedClusterAccess,
    private readonly seen: SimulatedRun,
    /** How long the kubelet waits for its certificate, then for the service to see its Node Ready. */
    private readonly waitSeconds: number,
  ) {}

  validate(): [] {
    return [];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const { config } = ctx;
    if (config.kubeletBootstrapToken === null) {
      throw new Error('the launch carried no kubelet bootstrap token');
    }
    await ctx.progress({ message: 'kubelet: requesting a client certificate', progress: 10 });
    const bootstrap = new KubeClient({ server: this.cluster.server, caPem: this.cluster.caPem, token: config.kubeletBootstrapToken }, 'kubelet/simulated');
    const { csrPem, keyPem } = await generateCertificateRequest({ commonName: `system:node:${config.nodeName}`, organizations: ['system:nodes'] });
    const filedAt = performance.now();
    const created = await bootstrap.post<CsrObject>(CSR_PATH, {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'csr-' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: KUBELET_CLIENT_SIGNER, usages: ['digital signature', 'client auth'] },
    });
    const name = created.metadata?.name ?? '';
    await ctx.progress({ message: `kubelet: waiting for certificate approval of ${name}`, progress: 30 });
    const deadline = Date.now() + this.waitSeconds * 1000;
    let certificate = '';
    while (!certificate) {
      ctx.signal.throwIfAborted();
      if (Date.now() > deadline) {
        throw new Error(`the kubelet's CSR ${name} had no certificate after ${this.waitSeconds} s`);
      }
      await sleep(200, undefined, { signal: ctx.signal });
      const csr = await bootstrap.get<CsrObject>(`${CSR_PATH}/${name}`);
      const denied = csr.status?.conditions?.find((condition) => condition.type === 'Denied');
      if (denied) {
        throw new Error(`the kubelet's CSR ${name} was denied: ${denied.message ?? ''}`);
      }
      certificate = csr.status?.certificate ? Buffer.from(csr.status.certificate, 'base64').toString() : '';
    }
    this.seen.csrApprovalMs = performance.now() - filedAt;
    ctx.log.info(`kubelet: ${name} issued after ${this.seen.csrApprovalMs.toFixed(0)} ms`);
    bootstrap.close();
    const kubelet = new KubeClient({ server: this.cluster.server, caPem: this.cluster.caPem, clientCertPem: certificate, clientKeyPem: keyPem }, 'kubelet/simulated');
    try {
      await kubelet.post('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: config.nodeName, labels: { 'kubernetes.io/hostname': config.nodeName, 'kubernetes.io/os': 'linux', ...Object.fromEntries(config.labels.map((label) => [label.key, label.value])) } },
        status: {
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
          addresses: [{ type: 'InternalIP', address: config.nodeIp }, { type: 'Hostname', address: config.nodeName }],
        },
      });
    } finally {
      kubelet.close();
    }
    ctx.log.info(`kubelet: Node ${config.nodeName} registered`);
    await ctx.progress({ message: `kubelet: Node ${config.nodeName} registered`, progress: 60 });
    for (;;) {
      const { run } = await ctx.api.agentRun(ctx.signal);
      if (run?.nodeReady) {
        return success(`Node ${config.nodeName} is Ready`);
      }
      if (Date.now() > deadline) {
        throw new Error(`the service did not see Node ${config.nodeName} Ready within ${this.waitSeconds} s (registered: ${String(run?.nodeRegistered)})`);
      }
      await sleep(KUBELET_POLL_INTERVAL_MS, undefined, { signal: ctx.signal });
    }
  }
}

function simulatedRegistry(cluster: SimulatedClusterAccess, run: SimulatedRun): StepRegistry {
  return {
    PREFLIGHT: new SimulatedStep('PREFLIGHT', SIMULATED_PROGRESS.PREFLIGHT),
    DOWNLOAD_BINARIES: defaultStepRegistry().DOWNLOAD_BINARIES,
    INSTALL_PACKAGES: new SimulatedStep('INSTALL_PACKAGES', SIMULATED_PROGRESS.INSTALL_PACKAGES),
    INSTALL_SERVICES: new SimulatedStep('INSTALL_SERVICES', SIMULATED_PROGRESS.INSTALL_SERVICES),
    APPLY_IGNITION: new SimulatedStep('APPLY_IGNITION', SIMULATED_PROGRESS.APPLY_IGNITION),
    START_KUBELET: new SimulatedKubeletStep(cluster, run, KUBELET_WAIT_SECONDS),
  };
}

/** Runs one agent for a launch's config until it ends. */
async function runSimulatedAgent(config: AgentConfig, cluster: SimulatedClusterAccess, run: SimulatedRun, figures: AgentRequestTimings, terminate: AbortSignal): Promise<RunOutcome> {
  const clock = new SystemClock();
  const fs = new MemoryFileSystem();
  const http = new TimedHttp(new NodeHttp('boot-worker/simulated'), figures);
  const control = new RunControl();
  const api = control.observe(new GraphqlApiClient({ apiUrl: config.apiUrl, token: config.token, serviceTls: config.serviceTls, http, clock }));
  const log = agentLog(config.runId);
  await fs.mkdir(config.stateDir);
  const spool = await Spool.open(fs, statePaths(config.stateDir).spool, config.runId, log);
  const sender = new CountingSender(run, {
    spool,
    api,
    clock,
    log,
    ...control.senderHooks,
  });
  const runner = new InstallRunner({
    config,
    registry: simulatedRegistry(cluster, run),
    exec: new FakeExecutor(),
    fs,
    clock,
    api,
    http,
    net: new FakeNetwork(),
    system: new FakeSystemInfo(config.nodeName),
    artifacts: new ArtifactClient({ apiUrl: config.apiUrl, token: config.token, serviceTls: config.serviceTls, manifestSha256: config.artifactManifestSha256, http, fs, clock, log }),
    log,
    sender,
    control,
    agentVersion: 'simulated',
  });
  return runner.run(terminate);
}

/** The launcher: `POST /launch` (an agent config) starts an agent, `POST /stop` ({ runId }) stops it. */
export class SimulatedFleet {
  readonly runs = new Map<string, SimulatedRun>();
  readonly figures: AgentRequestTimings = { reportMs: [], eventsPerRequest: [] };
  private readonly stops = new Map<string, AbortController>();
  private readonly running = new Set<Promise<void>>();
  private server: Server | null = null;

  constructor(private readonly cluster: SimulatedClusterAccess) {}

  /** Listens on loopback; returns the URL to give the API as AGENT_LAUNCHER_URL. */
  async listen(): Promise<string> {
    const server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        try {
          const parsed: unknown = JSON.parse(body);
          if (request.url === '/launch') {
            const config = parseAgentConfig(parsed);
            if (!config.ok) {
              response.writeHead(400).end(config.problems.join('; '));
              return;
            }
            this.launch(config.config);
          } else if (request.url === '/stop') {
            this.stops.get(String((parsed as { runId?: unknown }).runId))?.abort();
          } else {
            response.writeHead(404).end();
            return;
          }
          response.writeHead(202).end();
        } catch (error) {
          response.writeHead(400).end(String(error));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Resolves once `count` runs have ended (or rejects after `timeoutMs`). */
  async ended(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ([...this.runs.values()].filter((run) => run.endedAt !== null).length < count) {
      if (Date.now() > deadline) {
        throw new Error(`${[...this.runs.values()].filter((run) => run.endedAt !== null).length} of ${count} simulated agents ended within ${timeoutMs / 1000} s (${this.runs.size} launched)`);
      }
      await sleep(200);
    }
  }

  async close(): Promise<void> {
    for (const stop of this.stops.values()) {
      stop.abort();
    }
    await Promise.allSettled(this.running);
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private launch(config: AgentConfig): void {
    if (this.stops.has(config.runId)) {
      return;
    }
    const run: SimulatedRun = { runId: config.runId, nodeName: config.nodeName, launchedAt: performance.now(), endedAt: null, outcome: null, sentSeqs: [], csrApprovalMs: null, error: null };
    const stop = new AbortController();
    this.runs.set(config.runId, run);
    this.stops.set(config.runId, stop);
    const running = runSimulatedAgent(config, this.cluster, run, this.figures, stop.signal).then(
      (outcome) => {
        run.outcome = outcome;
      },
      (error: unknown) => {
        run.error = error instanceof Error ? error.message : String(error);
      },
    ).finally(() => {
      run.endedAt = performance.now();
      this.running.delete(running);
    });
    this.running.add(running);
  }
}
