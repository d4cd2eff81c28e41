import type { Logger } from 'pino';
import type { AgentTokens, JobRegistry, NodeStore, RemovalRunStore } from '@ccos/api/data-access-db';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { ApprovalGate, EventBus } from '@ccos/api/util-graphql';
import { SystemClock } from '@ccos/shared/util-timing';
import { sshHostCommands } from './host-commands';
import { KUBE_DRAINS } from './phases/drain.phase';
import { removalPhaseRegistry } from './phases/phase-registry';
import { RemovalGauges } from './removal-gauges';
import { RemovalLog } from './removal-log';
import type { ClusterAccess, CsrLeftovers, HostAccess } from './removal-ports';
import { RemovalRunner, type RemovalRunnerOptions } from './removal-runner';
import { RemovalService } from './removal.service';

export interface RemovalFeatureOptions {
  readonly runs: RemovalRunStore;
  readonly nodes: NodeStore;
  readonly tokens: AgentTokens;
  /** Per-cluster client and Node cache (data-access-cluster-connections' ClusterConnections). */
  readonly clusters: ClusterAccess;
  /** Pending CSRs and their denial (feature-csrs' CsrService). */
  readonly csrs: CsrLeftovers;
  /** SSH access to a node's host (data-access-hosts' sshTargetOf), null for discovered nodes. */
  readonly hosts: HostAccess;
  readonly ssh: SshPool;
  readonly events: EventBus;
  /** The job engine: a run is executed by its `removal.run` job. */
  readonly jobs: JobRegistry;
  readonly logger: Logger;
  readonly runner?: RemovalRunnerOptions;
  /** Four-eyes: holds forced and ungraceful removals, skipped host sides and forced drains on clusters that require a second person. */
  readonly approvals?: ApprovalGate;
}

/** The removal feature as the composition root sees it. */
export interface RemovalFeature {
  readonly service: RemovalService;
  readonly runner: RemovalRunner;
  /** Removal runs by status, for the metrics. */
  readonly gauges: RemovalGauges;
  /** Queues again the job of every RUNNING run (at a start; their number). */
  queueRunning(): Promise<number>;
  /** Stops executing: the runs executing here are handed over to another worker. */
  stop(): Promise<void>;
}

export function createRemovalFeature(options: RemovalFeatureOptions): RemovalFeature {
  const log = new RemovalLog(options.runs, options.events, options.logger);
  const clock = options.runner?.clock ?? new SystemClock();
  const phases = removalPhaseRegistry({
    clusters: options.clusters,
    drains: KUBE_DRAINS,
    clock,
    evictionRetryMs: options.runner?.evictionRetryMs,
    hostWaitMs: options.runner?.hostWaitMs,
    observer: options.runner?.observer,
    nodes: options.nodes,
    hosts: options.hosts,
    hostCommands: sshHostCommands(options.ssh),
    csrs: options.csrs,
    tokens: options.tokens,
  });
  const runner = new RemovalRunner(options.runs, options.nodes, phases, log, options.jobs, options.logger, { ...options.runner, clock });
  const service = new RemovalService(options.runs, options.nodes, options.clusters, options.hosts, options.ssh, runner, options.approvals);
  const stop = async (): Promise<void> => {
    await runner.stop();
  };
  return { service, runner, gauges: new RemovalGauges(options.runs), queueRunning: () => runner.queueRunning(), stop };
}
