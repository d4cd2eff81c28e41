import type { Logger } from 'pino';
import { type HostManifestEntity, type HostManifestStore, type JobRegistry, type NodeEntity, type NodeStore, PeriodicQueueing, hostQueue } from '@ccos/api/data-access-db';
import { sshFailureOutcome, sshTargetOf } from '@ccos/api/data-access-hosts';
import { type SshPool, isSshError, runChecks, runningKubeletCheck, sha256EachCheck } from '@ccos/api/data-access-ssh';
import { PreconditionError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type FileDrift, type HostManifestState, type ManifestFile, type RunningChange, type RunningKubelet, driftOf, hostManifestState, runningChanges } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';

/** The durable job that inspects one node's host (payload: its id). */
export const INSPECT_TASK = 'node.inspect-host';

/** Nodes whose hosts the periodic inspection looks at: joined ones the service installed. */
const INSPECTED_STATUSES = ['JOINED', 'DRAIN_FAILED'] as const;
const INSPECT_TIMEOUT_MS = 120_000;
/**
 * How long the SHA-256 of a cluster's artifact set is kept: reading it lists and stats the set's
 * files, and every node change a console follows asks for it. An import or a new override shows
 * as OUTDATED this much later at most.
 */
const CLUSTER_SET_TTL_MS = 10_000;

/** What a host runs and what its last inspection found, as the API shows it. */
export interface HostManifestView {
  readonly nodeId: string;
  readonly runId: string;
  readonly recordedAt: Date;
  readonly artifactSetVersion: string | null;
  /** False when the cluster's artifact set is another than the one the host was installed from. */
  readonly onClusterSet: boolean;
  readonly state: HostManifestState;
  readonly files: readonly ManifestFile[];
  /** The kernel and the running kubelet once the node was Ready (null: the agent did not say). */
  readonly runningAtInstall: RunningKubelet | null;
  /** The same as the last inspection that reached the host found them (null: none yet). */
  readonly runningNow: RunningKubelet | null;
  readonly runningChanges: readonly RunningChange[];
  readonly inspectedAt: Date | null;
  readonly drift: readonly FileDrift[];
  readonly inspectionProblem: CodedText | null;
}

export interface HostInspectorOptions {
  readonly nodes: NodeStore;
  readonly manifests: HostManifestStore;
  readonly ssh: SshPool;
  readonly secrets: SecretBox;
  readonly jobs: JobRegistry;
  /** SHA-256 of the artifact manifest the cluster's installs get now; null when it has none. */
  readonly clusterSetSha256: (clusterId: string) => Promise<string | null>;
  /** How often every joined node's host is inspected; 0 turns the periodic inspection off. */
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Drift: the files a host's last install wrote, hashed again on the host (one exec over SSH for
 * all of them, host key pinned) and compared with what the install recorded. An operator inspects
 * one node at once; every `intervalMs` one job per joined node on its host's queue does the same.
 * A host that cannot be reached is a finding (the problem is kept beside the drift found before),
 * not a failure.
 */
export class HostInspector {
  private readonly periodic: PeriodicQueueing;
  private readonly clusterSets = new Map<string, { readonly at: number; readonly sha256: Promise<string | null> }>();

  constructor(private readonly options: HostInspectorOptions) {
    options.jobs.register(INSPECT_TASK, async (payload) => void (await this.inspectIfMember(String(payload['nodeId']))));
    this.periodic = new PeriodicQueueing(options.intervalMs, () => this.queueAll(), (error) =>
      options.logger.warn({ err: error, component: 'host-inspector' }, 'could not queue the hosts\' inspections'));
  }

  start(): void {
    this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Queues an inspection of every joined node's host that has a manifest; their number. */
  async queueAll(): Promise<number> {
    const members = await this.options.nodes.withHostAccess(INSPECTED_STATUSES);
    const recorded = new Set((await this.options.manifests.statesOf(members.map((node) => node.id))).map((manifest) => manifest.nodeId));
    const inspected = members.filter((node) => recorded.has(node.id));
    for (const node of inspected) {
      await this.queue(node);
    }
    return inspected.length;
  }

  /** Queues an inspection of one node's host (after the nodes' jobs already on its host's queue); one with no record is left alone when it runs. */
  async queue(node: Pick<NodeEntity, 'id' | 'clusterId' | 'hostname' | 'ip'>): Promise<void> {
    if (!node.ip) {
      return;
    }
    await this.options.jobs.enqueue(INSPECT_TASK, { nodeId: node.id, clusterId: node.clusterId, hostname: node.hostname }, {
      key: `${INSPECT_TASK}:${node.id}`,
      queue: hostQueue(node.ip),
      maxAttempts: 1,
    });
  }

  /** Joined nodes with a record of what their hosts run, by cluster and state (the metrics; every replica reads the same). */
  async countByState(): Promise<Array<{ clusterId: string; state: HostManifestState; count: number }>> {
    const counts = new Map<string, { clusterId: string; state: HostManifestState; count: number }>();
    for (const { clusterId, manifest } of await this.options.manifests.ofNodesIn(INSPECTED_STATUSES)) {
      const state = await this.stateOf(manifest, clusterId);
      const entry = counts.get(`${clusterId}/${state}`) ?? { clusterId, state, count: 0 };
      entry.count += 1;
      counts.set(`${clusterId}/${state}`, entry);
    }
    return [...counts.values()];
  }

  /** Each node's host state, in the order asked (null for one no install recorded), with one read of the records. */
  async statesOf(nodes: ReadonlyArray<{ readonly nodeId: string; readonly clusterId: string }>): Promise<Array<HostManifestState | null>> {
    return (await this.standingsOf(nodes)).map((standing) => standing?.state ?? null);
  }

  /** Each node's host state and whether it is on its cluster's set, in the order asked (null for one no install recorded), with one read of the records. */
  async standingsOf(nodes: ReadonlyArray<{ readonly nodeId: string; readonly clusterId: string }>): Promise<Array<Pick<HostManifestView, 'state' | 'onClusterSet'> | null>> {
    const manifests = new Map((await this.options.manifests.statesOf(nodes.map((node) => node.nodeId))).map((manifest) => [manifest.nodeId, manifest]));
    return Promise.all(nodes.map(async ({ nodeId, clusterId }) => {
      const manifest = manifests.get(nodeId);
      if (!manifest) {
        return null;
      }
      const onClusterSet = await this.onClusterSet(manifest.artifactManifestSha256, clusterId);
      return { state: hostManifestState(manifest, onClusterSet), onClusterSet };
    }));
  }

  /** What the node's host runs, with its state now; null when no install recorded it. */
  async view(nodeId: string): Promise<HostManifestView | null> {
    const node = await this.options.nodes.get(nodeId);
    const manifest = await this.options.manifests.find(node.id);
    return manifest ? this.viewOf(node, manifest) : null;
  }

  /** Hashes the recorded files on the host now and keeps what that found. */
  async inspect(nodeId: string): Promise<HostManifestView> {
    const node = await this.options.nodes.get(nodeId);
    const manifest = await this.options.manifests.find(node.id);
    if (!manifest) {
      throw new PreconditionError(message('hostManifest.none', { hostname: node.hostname }));
    }
    if (!node.sshCredentialsSealed || !node.ip) {
      throw new PreconditionError(message('hostManifest.noAccess', { hostname: node.hostname }));
    }
    const inspectedAt = new Date(this.options.clock.now());
    let saved: HostManifestEntity | null;
    try {
      const [found, running] = await this.options.ssh.run(sshTargetOf(node, this.options.secrets), (session) =>
        runChecks(session, [sha256EachCheck(manifest.files.map((file) => file.path)), runningKubeletCheck()] as const, { sudo: session.sudo, timeoutMs: INSPECT_TIMEOUT_MS }),
      );
      const drift = driftOf(manifest.files, found);
      saved = await this.options.manifests.saveInspection(node.id, manifest.runId, { inspectedAt, drift, running });
      if (drift.length !== manifest.drift.length || drift.some((file, index) => manifest.drift[index]?.path !== file.path || manifest.drift[index]?.found !== file.found)) {
        this.options.logger.warn({ nodeId: node.id, host: node.ip, drifted: drift.map((file) => file.path) }, drift.length > 0 ? 'files on a node\'s host are not as its install left them' : 'every recorded file on the node\'s host is as its install left it again');
      }
    } catch (error) {
      const problem = sshFailureOutcome(error)?.reason ?? (isSshError(error) ? message('hostManifest.inspectFailed', { detail: error.message }) : null);
      if (problem === null) {
        throw error;
      }
      saved = await this.options.manifests.saveInspection(node.id, manifest.runId, { inspectedAt, problem });
    }
    if (!saved) {
      // The node's record went while its host was inspected.
      throw new PreconditionError(message('hostManifest.none', { hostname: node.hostname }));
    }
    return this.viewOf(node, saved);
  }

  private async inspectIfMember(nodeId: string): Promise<void> {
    const node = await this.options.nodes.find(nodeId);
    if (node && (INSPECTED_STATUSES as readonly string[]).includes(node.status) && node.sshCredentialsSealed && node.ip && (await this.options.manifests.find(nodeId))) {
      await this.inspect(nodeId);
    }
  }

  /** Whether a host installed from `installed` is on the cluster's set; unknown on either side (an older record, a set that cannot be read) is not called outdated. */
  private async onClusterSet(installed: string | null, clusterId: string): Promise<boolean> {
    if (installed === null) {
      return true;
    }
    const cluster = await this.clusterSet(clusterId);
    return cluster === null || cluster === installed;
  }

  private async stateOf(manifest: Pick<HostManifestEntity, 'artifactManifestSha256' | 'inspectedAt' | 'drift'>, clusterId: string): Promise<HostManifestState> {
    return hostManifestState(manifest, await this.onClusterSet(manifest.artifactManifestSha256, clusterId));
  }

  private clusterSet(clusterId: string): Promise<string | null> {
    const now = this.options.clock.monotonic();
    const kept = this.clusterSets.get(clusterId);
    if (kept && now - kept.at < CLUSTER_SET_TTL_MS) {
      return kept.sha256;
    }
    const sha256 = this.options.clusterSetSha256(clusterId).catch(() => null);
    this.clusterSets.set(clusterId, { at: now, sha256 });
    return sha256;
  }

  private async viewOf(node: NodeEntity, manifest: HostManifestEntity): Promise<HostManifestView> {
    const onClusterSet = await this.onClusterSet(manifest.artifactManifestSha256, node.clusterId);
    return {
      nodeId: node.id,
      runId: manifest.runId,
      recordedAt: manifest.recordedAt,
      artifactSetVersion: manifest.artifactSetVersion,
      onClusterSet,
      state: hostManifestState(manifest, onClusterSet),
      files: manifest.files,
      runningAtInstall: manifest.runningAtInstall,
      runningNow: manifest.runningNow,
      runningChanges: runningChanges(manifest.runningAtInstall, manifest.runningNow),
      inspectedAt: manifest.inspectedAt,
      drift: manifest.drift,
      inspectionProblem: manifest.inspectionProblem,
    };
  }
}
