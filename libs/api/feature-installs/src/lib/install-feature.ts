import type { Router } from 'express';
import type { Logger } from 'pino';
import type { ClusterConnections, ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import type { AgentTokens, HostManifestStore, InstallRunNotices, InstallRunStore, JobRegistry, NodeBatchStore, NodeStore } from '@ccos/api/data-access-db';
import type { AgentBinary } from '@ccos/api/data-access-hosts';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { EventBus } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import type { AgentChannelSettings } from './agent-channel.type';
import { AgentReportService } from './agent-report.service';
import { BatchInstaller } from './batch-installer';
import { type SessionRole, diagnosticsRoutes } from './diagnostics-routes';
import { type InstallObserver, InstallGauges, UNOBSERVED_INSTALLS } from './install-metrics';
import { InstallProgress } from './install-progress';
import { InstallRunSweeper } from './install-run-sweeper';
import { InstallRunView } from './install-run.view';
import { type InstallReadiness, InstallService } from './install.service';
import { LauncherAgentControl } from './launcher-agent-control';
import { STEP_EVENT_RESERVE, STEP_EVENT_RESERVE_BYTES } from './report-step.input';
import { RunBootstrapIdentities } from './run-bootstrap-identities';
import { type AgentLaunchSettings, SshAgentControl } from './ssh-agent-control';
import { StallWatchdog } from './stall-watchdog';

export interface InstallFeatureOptions {
  readonly runs: InstallRunStore;
  readonly notices: InstallRunNotices;
  readonly nodes: NodeStore;
  readonly batches: NodeBatchStore;
  readonly tokens: AgentTokens;
  /** Where a succeeded run's files are recorded as what its host runs. */
  readonly hostManifests: Pick<HostManifestStore, 'recordRun'>;
  /** Each cluster's client, for the runs' bootstrap identities. */
  readonly connections: ClusterConnections;
  /** What the agent's START_KUBELET and JOIN_CLUSTER steps ask of the cluster (the Node cache and the CSR service). */
  readonly cluster: ClusterProbe;
  readonly ssh: SshPool;
  readonly secrets: SecretBox;
  /** The agent executable copied to hosts; null while it is not built. */
  readonly agent: () => AgentBinary | null;
  /** What a run's agent is told in its config, and where it reaches the service. */
  readonly launch: AgentLaunchSettings;
  /** A simulated fleet's agent launcher on loopback (AGENT_LAUNCHER_URL): agents are started there instead of over SSH. */
  readonly agentLauncherUrl?: string | null;
  /** Refuses an install up front when the cluster's artifact set is incomplete. */
  readonly readiness: InstallReadiness;
  /** The namespace of the runs' bootstrap identities (ServiceAccounts). */
  readonly bootstrapNamespace: string;
  /** How long a run may take: its agent token and bootstrap identity end with it. */
  readonly runDeadlineMs: number;
  /** What one run's agent may store: PROGRESS events and their bytes (the events that finish steps have a reserve beyond). */
  readonly eventCaps: { readonly events: number; readonly bytes: number };
  /** Silence after which a running install is reported stalled. */
  readonly stallAfterSeconds: number;
  /** The session's role, for downloading a run's diagnostics. */
  readonly sessionRole: SessionRole;
  readonly agentChannel: AgentChannelSettings;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly observer?: InstallObserver;
  /** The publisher of install progress, shared with the notices other features raise (RunNoticeBoard); one on `events` when not given. */
  readonly progress?: InstallProgress;
  /** The durable jobs: agents' starts and stops, batch passes. */
  readonly jobs: JobRegistry;
}

/** The install feature as the composition root sees it. */
export interface InstallFeature {
  readonly service: InstallService;
  readonly runView: InstallRunView;
  /** The install runs' store, for their events a page at a time. */
  readonly runs: InstallRunStore;
  readonly agentReports: AgentReportService;
  /** Installs the hosts of node batches (feature-nodes' BatchInstalls). */
  readonly batches: BatchInstaller;
  readonly agentChannel: AgentChannelSettings;
  readonly gauges: InstallGauges;
  /** Mounts the agent's diagnostics upload and the operators' download (`POST /agent/diagnostics`, `GET /api/install-runs/:id/diagnostics.tar.gz`). */
  mountRoutes(app: Router): void;
  /**
   * Once the service listens (agents are started with its address): the stall watchdog, the
   * sweeper (which also ends what ended while the service was down: overdue runs, identities of
   * ended runs), then the batches a restart interrupted (their number).
   */
  start(): Promise<number>;
  stop(): Promise<void>;
}

export function createInstallFeature(options: InstallFeatureOptions): InstallFeature {
  const { runs, nodes, tokens, events, logger } = options;
  const agentControl = options.agentLauncherUrl
    ? new LauncherAgentControl(options.agentLauncherUrl, options.launch)
    : new SshAgentControl(options.ssh, options.secrets, options.agent, options.launch);
  const identities = new RunBootstrapIdentities(runs, { clientFor: async (clusterId) => (await options.connections.ensure(clusterId)).client }, options.bootstrapNamespace, logger);
  const progress = options.progress ?? new InstallProgress(events);
  const service = new InstallService(runs, nodes, tokens, agentControl, identities, progress, logger, options.runDeadlineMs, options.observer ?? UNOBSERVED_INSTALLS, options.jobs, options.readiness);
  const agentReports = new AgentReportService(runs, tokens, nodes, service, options.cluster, progress, logger, options.hostManifests, options.observer, {
    ...options.eventCaps,
    reserveEvents: STEP_EVENT_RESERVE,
    reserveBytes: STEP_EVENT_RESERVE_BYTES,
  });
  const batches = new BatchInstaller(options.batches, service, events, options.jobs, logger);
  const watchdog = new StallWatchdog(runs, nodes, options.stallAfterSeconds, logger);
  const sweeper = new InstallRunSweeper(runs, nodes, service, identities, logger);
  return {
    service,
    runView: new InstallRunView(runs, options.notices),
    runs,
    agentReports,
    batches,
    agentChannel: options.agentChannel,
    gauges: new InstallGauges(runs, nodes),
    mountRoutes: (app) => void app.use(diagnosticsRoutes(runs, tokens, options.sessionRole, (run) => service.publishRun(run))),
    async start() {
      watchdog.start();
      await sweeper.start();
      return batches.start();
    },
    async stop() {
      await batches.stop();
      await sweeper.stop();
      watchdog.stop();
    },
  };
}
