import type { Logger } from 'pino';
import type { ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import { type ClusterStore, type HostFacts, type JobRegistry, type NodeEntity, hostQueue, type NodeStore, reasonFields } from '@ccos/api/data-access-db';
import { AGENT_DIR, AGENT_REMOTE_PATH, type AgentBinary, ensureAgent, sshFailureOutcome, sshTargetOf } from '@ccos/api/data-access-hosts';
import { type RemoteFacts, type SshPool, type SshSession, readRemoteFacts, remoteFactsCheck, runChecks } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type HostScan, type HostVerdict, type Leftover, PreconditionError, decideHostVerdict, failedHardwareValidations, hardwareChanges, missingLabelValidation, statusText } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import { LEFTOVER_SCAN, scanHost } from './host-scan';
import type { ProvisioningQueue } from './node.service';

/** Room the agent needs beyond its own size (its run folders, downloaded rpms go elsewhere). */
const DISK_MARGIN_BYTES = 64 * 1024 * 1024;
/** The durable job that provisions one node (payload: its id). */
export const PROVISION_TASK = 'node.provision';

/** `uname -m` values the agent executable runs on, by the Node.js architecture it was built for. */
const HOST_ARCH: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64' };

/**
 * The background half of addNode: connect (pinning the host key on first use), read the
 * host's facts, copy the agent (sha256 checked on both ends), check that it runs, and
 * move the node to READY_TO_INSTALL — or to AUTH_FAILED, UNREACHABLE, HOST_KEY_CHANGED or
 * PRECHECK_FAILED with a reason. Failures are statuses, never retried in a loop.
 */
export class NodeProvisioner implements ProvisioningQueue {
  constructor(
    private readonly nodes: NodeStore,
    private readonly secrets: SecretBox,
    private readonly pool: SshPool,
    private readonly agent: () => AgentBinary | null,
    private readonly jobs: JobRegistry,
    private readonly logger: Logger,
    /** The cluster side of the leftover checks (a Node or CSRs under the host's name); none in unit tests. */
    private readonly cluster: ClusterProbe | null = null,
    /** The clusters' host minimums; none in unit tests. */
    private readonly clusterRecords: Pick<ClusterStore, 'find'> | null = null,
  ) {
    jobs.register(PROVISION_TASK, async (payload, { lost }) => this.provision(String(payload['nodeId']), lost));
  }

  /**
   * Queues the node's provisioning as a durable job: it survives a restart, runs on whichever
   * process has a free worker, never beside another job on the same host, and is retried with
   * backoff when it fails unexpectedly (a status for the host's own failures is a success).
   * Asked again while it runs, it runs once more afterwards instead of being dropped, which would
   * leave the node ADDING for good.
   */
  async schedule(nodeId: string): Promise<void> {
    const node = await this.nodes.get(nodeId);
    // A node entered without an address (the cluster's own) has nothing to provision; its name stands in for the host.
    await this.jobs.enqueue(PROVISION_TASK, { nodeId: node.id, clusterId: node.clusterId, hostname: node.hostname }, { key: `${PROVISION_TASK}:${node.id}`, queue: hostQueue(node.ip ?? node.hostname) });
  }

  /**
   * Queues every node still being added (a job already waiting for one stays the one job; nodes
   * added before jobs were durable have none); their number.
   */
  async resumePending(): Promise<number> {
    const pending = await this.nodes.withStatus('ADDING');
    for (const node of pending) {
      await this.schedule(node.id);
    }
    return pending.length;
  }

  /**
   * The host's facts and, unless this node has install runs (what they left is its own, not an
   * earlier membership's), its leftover scan: in one exec when both run as the SSH user.
   */
  private async factsAndScan(node: NodeEntity, session: SshSession): Promise<{ facts: RemoteFacts; scan: HostScan | null }> {
    const wantScan = !(await this.nodes.hasInstallRuns(node.id));
    if (wantScan && !session.sudo) {
      const [facts, scan] = await runChecks(session, [remoteFactsCheck(AGENT_DIR), LEFTOVER_SCAN] as const, { timeoutMs: 30_000, sudo: false });
      return { facts, scan };
    }
    const facts = await readRemoteFacts(session, { diskPath: AGENT_DIR });
    return { facts, scan: wantScan ? await scanHost(session) : null };
  }

  /** The verdict on leftovers of an earlier membership; null (the stored verdict stands) without a scan. */
  private async verdictOf(node: NodeEntity, scan: HostScan | null): Promise<{ verdict: HostVerdict; machineId: string | null } | null> {
    if (scan === null) {
      return null;
    }
    const leftovers: Leftover[] = [...scan.leftovers];
    if (scan.machineId) {
      const removed = await this.nodes.removedMachine(scan.machineId, node.id);
      if (removed) {
        // Data only (the item is shown as it is in every language; its kind says what it means): the machine-id, the removed node and when.
        leftovers.push({ kind: 'REMOVED_MACHINE', item: `machine-id ${scan.machineId} → node/${removed.hostname} (${removed.updatedAt.toISOString()})` });
      }
    }
    let liveNodeNamed = false;
    if (this.cluster) {
      const state = await this.cluster.nodeState(node.clusterId, node.hostname).catch(() => null);
      if (state?.registered) {
        leftovers.push({ kind: 'CLUSTER_NODE', item: `Node/${node.hostname} (${state.ready ? 'Ready' : 'not Ready'})`, name: node.hostname });
        liveNodeNamed = state.ready;
      }
      const csrs = await this.cluster.pendingCsrNames(node.clusterId, node.hostname).catch(() => []);
      leftovers.push(...csrs.map((name) => ({ kind: 'CLUSTER_CSRS' as const, item: `CertificateSigningRequest/${name}`, name })));
    }
    return { verdict: decideHostVerdict(leftovers, { liveNodeNamed }), machineId: scan.machineId };
  }

  /** Why the host is below what its cluster asks of every host (each failed validation named); null when it is not. */
  private async belowClusterMinimums(node: NodeEntity, facts: RemoteFacts): Promise<CodedText | null> {
    const minimums = (await this.clusterRecords?.find(node.clusterId))?.hostMinimums;
    const labels = minimums ? missingLabelValidation(node.labels, minimums) : null;
    const failed = minimums ? [...failedHardwareValidations(facts.hardware, minimums), ...(labels ? [labels] : [])] : [];
    return failed.length > 0 ? message('node.belowClusterMinimums', { validations: failed.map((validation) => validation.text).join('; ') }) : null;
  }

  /**
   * Reads the host's facts again over SSH (the same exec as at add time, with the pinned host key)
   * and records them with what changed since the last reading. A host that cannot be reached, or
   * presents another key, changes nothing and says why; the node's status stays as it is.
   */
  async reinspect(nodeId: string): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    if (!node.ip || !node.sshCredentialsSealed || node.status === 'ADDING' || node.status === 'REMOVED') {
      throw new PreconditionError(message('node.reinspectNotNow', { hostname: node.hostname, status: statusText(node.status) }));
    }
    try {
      return await this.pool.run(sshTargetOf(node, this.secrets), async (session) => {
        const facts = await readRemoteFacts(session, { diskPath: AGENT_DIR });
        const read = recordedFacts(facts);
        const current = await this.nodes.get(node.id);
        return this.nodes.update(node.id, { facts: { ...current.facts, ...read, inspectedAt: new Date().toISOString(), changes: hardwareChanges(current.facts, read) } });
      });
    } catch (error) {
      const outcome = sshFailureOutcome(error);
      if (!outcome) {
        throw error;
      }
      throw new PreconditionError(message('node.reinspectFailed', { hostname: node.hostname, reason: outcome.reason }));
    }
  }

  /**
   * `signal`: aborted when this job is no longer this process's (another took it over): nothing
   * more is written or run on the host from here.
   */
  private async provision(nodeId: string, signal?: AbortSignal): Promise<void> {
    const owned = (): void => signal?.throwIfAborted();
    const node = await this.nodes.find(nodeId);
    if (node?.status !== 'ADDING') {
      return;
    }
    const agent = this.agent();
    if (!agent) {
      await this.nodes.transition(node.id, 'PRECHECK_FAILED', message('node.noAgentExecutable'));
      return;
    }
    this.logger.info({ nodeId: node.id, host: node.ip, port: node.sshPort }, 'connecting over SSH to add the node');
    try {
      await this.pool.run(sshTargetOf(node, this.secrets), async (session) => {
        owned();
        if (session.hostKeyStatus === 'first-use') {
          await this.nodes.update(node.id, { hostKeyFingerprint: session.hostKey.fingerprint, hostKeyAlgorithm: session.hostKey.algorithm, ...reasonFields(message('node.connectedChecking')) });
        }
        const { facts, scan } = await this.factsAndScan(node, session);
        owned();
        await this.nodes.update(node.id, {
          facts: recordedFacts(facts),
        });
        const problem = precheck(facts, agent) ?? (await this.belowClusterMinimums(node, facts));
        if (problem) {
          await this.nodes.transition(node.id, 'PRECHECK_FAILED', problem);
          return;
        }
        const verdict = await this.verdictOf(node, scan);
        owned();
        if (verdict) {
          await this.nodes.update(node.id, { hostVerdict: verdict.verdict, facts: { ...(await this.nodes.get(node.id)).facts, machineId: verdict.machineId ?? undefined } });
        }
        await this.nodes.update(node.id, reasonFields(message('node.copyingAgent', { size: Math.round(agent.size / 1024 / 1024) })));
        await ensureAgent(session, agent);
        owned();
        const version = await session.exec([AGENT_REMOTE_PATH, 'version'], { timeoutMs: 30_000, signal });
        owned();
        if (version.exitCode !== 0) {
          await this.nodes.transition(
            node.id,
            'PRECHECK_FAILED',
            message('node.agentDoesNotRun', { exitCode: String(version.exitCode), output: tail(version.stderr || version.stdout), dir: AGENT_DIR }),
          );
          return;
        }
        const copied = { version: tail(version.stdout), sha256: agent.sha256.slice(0, 12) };
        const reason =
          verdict && verdict.verdict.verdict !== 'CLEAN' ? message('node.agentCopiedBlocked', { ...copied, reason: verdict.verdict.reasonCoded ?? verdict.verdict.reason }) : message('node.agentCopied', copied);
        await this.nodes.transition(node.id, 'AGENT_COPIED', reason, {
          agentSha256: agent.sha256,
        });
      }, { signal });
    } catch (error) {
      if (signal?.aborted) {
        throw signal.reason;
      }
      const outcome = sshFailureOutcome(error);
      if (outcome) {
        await this.nodes.transition(node.id, outcome.event, outcome.reason, outcome.fields);
        return;
      }
      const text = error instanceof Error ? error.message : String(error);
      this.logger.warn({ nodeId: node.id, reason: text }, 'could not copy the agent');
      await this.nodes.transition(node.id, 'PRECHECK_FAILED', message('node.agentCopyFailed', { error: text }));
    }
  }
}

function precheck(facts: RemoteFacts, agent: AgentBinary): CodedText | null {
  const wanted = HOST_ARCH[process.arch] ?? process.arch;
  if (facts.arch !== wanted) {
    return message('node.wrongArch', { arch: facts.arch, wanted });
  }
  const needed = agent.size + DISK_MARGIN_BYTES;
  if (facts.disk.freeBytes !== null && facts.disk.freeBytes < needed) {
    return message('node.lowDisk', { path: facts.disk.path, free: mib(facts.disk.freeBytes), mount: facts.disk.mountPoint ?? '/', needed: mib(needed) });
  }
  return null;
}

function mib(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 300 ? `…${trimmed.slice(-300)}` : trimmed;
}

/** What the node record keeps of a host's facts, as read at add time and at every inspection. */
function recordedFacts(facts: RemoteFacts): HostFacts {
  return { arch: facts.arch, kernel: facts.kernel, osRelease: facts.os.prettyName ?? facts.os.id ?? undefined, freeDiskBytes: facts.disk.freeBytes, hardware: facts.hardware };
}
