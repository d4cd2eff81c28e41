import { randomUUID } from 'node:crypto';
import { type ClusterStore, type InstallRunStore, type NodeBatchEntity, type NodeBatchStore, type NodeEntity, type NodeStore, isUuid, reasonFields } from '@ccos/api/data-access-db';
import { type AgentBinary, type SshCredentials, credentialsFrom, sealCredentials } from '@ccos/api/data-access-hosts';
import { ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { AppError, BadUserInputError, NotFoundError, PreconditionError } from '@ccos/api/util-graphql';
import { toHostVerdictType } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import {
  type BatchPhase,
  type BulkProblem,
  type CheckedRow,
  DEFAULT_BATCH_CONCURRENCY,
  type InstallStep,
  MAX_BATCH_CONCURRENCY,
  batchState,
  canonicalIp,
  checkBulkRows,
  checkIp,
  countBatch,
  expandAddressRange,
  parseHostList,
  type RoleLabelAuthority,
  roleLabelRefusal,
} from '@ccos/shared/domain';
import { bare, isMessageCode, type MessageParams, message } from '@ccos/shared/messages';
import type { AddNodesInput, BulkHostInput } from './add-nodes.input';
import type { BatchInstalls, InstallReadiness } from './install-ports';
import type { AddNodesResultType, BatchHostType, BulkRowProblemType, BulkRowResultType, NodeBatchType } from './node-batch.type';
import { type ProvisioningQueue, oldCertificatesMayBeValid, removedNamesAmong } from './node.service';

/** Node statuses from which a retry first connects again (the add-time checks failed). */
const RECONNECT_FIRST = new Set(['UNREACHABLE', 'AUTH_FAILED', 'PRECHECK_FAILED']);

/**
 * Bulk add (many hosts in one request, every row checked before anything is stored) and
 * batches: install with bounded concurrency, retry the failed, cancel the rest. The work of a
 * batch install is the {@link BatchInstaller}'s; this service records what was asked.
 */
/** A problem as the API shows it: its English text and, where coded, its code and parameters. */
function problemView({ field, message: text, coded }: BulkProblem): BulkRowProblemType {
  return { field, message: text, messageCode: coded?.code ?? null, messageParams: coded ? { ...coded.params } : null };
}

export class NodeBatchService {
  constructor(
    private readonly clusters: ClusterStore,
    private readonly nodes: NodeStore,
    private readonly batches: NodeBatchStore,
    private readonly runs: InstallRunStore,
    private readonly secrets: SecretBox,
    private readonly provisioning: ProvisioningQueue,
    private readonly agent: () => AgentBinary | null,
    private readonly installer: BatchInstalls,
    private readonly defaultConcurrency: number = DEFAULT_BATCH_CONCURRENCY,
    private readonly readiness: InstallReadiness = async () => undefined,
    /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES). */
    private readonly allowedNodeRoles: readonly string[] = [],
    /** Which SSH targets may be entered: the service's one address policy (ALLOW_CLUSTER_ADDRESSES). */
    private readonly addresses: ClusterAddressGuard = new ClusterAddressGuard(),
  ) {}

  /** `by`: the caller's role, which bounds the node-role labels any row may set (see roleLabelRefusal). */
  async addNodes(input: AddNodesInput, actor: string, by: RoleLabelAuthority): Promise<AddNodesResultType> {
    const cluster = await this.clusters.get(input.clusterId);
    const requestProblems: BulkProblem[] = [];
    const sources = [input.list, input.range, input.rows].filter((source) => source !== null && source !== undefined);
    if (sources.length !== 1) {
      throw new BadUserInputError('input', message('batch.oneSource'));
    }
    const defaults = { sshPort: input.sshPort, sshUser: input.sshUser };
    let rows: CheckedRow[] = [];
    const ownCredentials = new Map<number, BulkHostInput>();
    if (input.list !== null && input.list !== undefined) {
      rows = parseHostList(input.list, defaults);
      if (rows.length === 0) {
        const noHosts = message('batch.noHosts');
        requestProblems.push({ field: 'row', message: noHosts.message, coded: bare(noHosts) });
      }
    } else if (input.range) {
      const expanded = expandAddressRange(input.range, { ...defaults, labels: input.labels, taints: input.taints });
      if (expanded.ok) {
        rows = expanded.rows;
      } else {
        requestProblems.push({ field: 'row', message: expanded.problem, coded: expanded.coded });
      }
    } else if (input.rows) {
      rows = input.rows.map((row, index) => {
        ownCredentials.set(index + 1, row);
        return {
          row: {
            line: index + 1, hostname: row.hostname, ip: row.ip, sshPort: row.sshPort ?? input.sshPort, sshUser: row.sshUser ?? input.sshUser,
            labels: row.labels.map(({ key, value }) => ({ key, value })), taints: row.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
          },
          problems: [],
        };
      });
    }
    // A role label the caller may not give refuses the whole request, whatever addValidRows says.
    const roleRefusal = roleLabelRefusal(rows.flatMap(({ row }) => row.labels), this.allowedNodeRoles, { role: by.role, reason: input.roleLabelReason }, 'input.roleLabelReason');
    if (roleRefusal) {
      throw roleRefusal;
    }

    const active = await this.nodes.listingOf(cluster.id);
    // A Node found in the cluster under a row's name, at its address (or none known): the row takes
    // its place (see NodeService.add), and the provisioning lists the Node among the host's leftovers.
    const superseded = new Map<number, string>();
    for (const { row } of rows) {
      const found = active.find((node) => node.origin === 'DISCOVERED' && node.status === 'JOINED' && node.hostname === row.hostname && (node.ip === null || (checkIp(row.ip) === null && canonicalIp(node.ip) === canonicalIp(row.ip))));
      if (found) {
        superseded.set(row.line, found.id);
      }
    }
    const existing = active.filter((node) => ![...superseded.values()].includes(node.id));
    const checked = checkBulkRows(rows, { hostnames: new Set(existing.map((node) => node.hostname)), ips: new Set(existing.flatMap((node) => (node.ip ? [node.ip] : []))) });
    // A name this cluster removed after it joined may still have valid certificates on its old
    // machine: a batch cannot acknowledge that, so the row is refused and addNode (an ADMIN's
    // acknowledgeOldCertificates) is the way in (see NodeService.add).
    const removedNames = await removedNamesAmong(this.nodes, cluster.id, rows.map(({ row }) => row.hostname));

    // One shared credential, sealed once for the whole batch; a row may bring its own.
    let shared: SshCredentials | null = null;
    if (input.password || input.privateKey || input.passphrase) {
      shared = this.credentialsOrProblem(input, requestProblems);
    }
    const sealedShared = shared ? sealCredentials(this.secrets, shared) : null;
    const credentials = new Map<number, ReturnType<typeof sealCredentials>>();
    const results = checked.map(({ row, problems }) => {
      const found = [...problems];
      const removed = removedNames.get(row.hostname);
      if (removed) {
        const text = oldCertificatesMayBeValid(removed);
        found.push({ field: 'hostname', message: text.message, coded: bare(text) });
      }
      const target = checkIp(row.ip) === null ? this.addresses.check(row.ip, 'ssh') : null;
      if (target && !target.ok) {
        found.push({ field: 'ip', message: target.reason, coded: bare(target.reasonCoded) });
      }
      const own = ownCredentials.get(row.line);
      if (own && (own.password || own.privateKey || own.passphrase)) {
        const parsed = this.credentialsOrProblem(own, found);
        if (parsed) {
          credentials.set(row.line, sealCredentials(this.secrets, parsed));
        }
      } else if (sealedShared) {
        credentials.set(row.line, sealedShared);
      } else if (!requestProblems.some((problem) => problem.field === 'credentials')) {
        const noCredentials = message('batch.noCredentials');
        found.push({ field: 'credentials', message: noCredentials.message, coded: bare(noCredentials) });
      }
      return { row, problems: found };
    });

    const view = (nodeIds: Map<number, string>): BulkRowResultType[] =>
      results.map(({ row, problems }) => ({
        line: row.line, hostname: row.hostname, ip: row.ip, sshPort: row.sshPort, sshUser: row.sshUser,
        labels: row.labels.map(({ key, value }) => ({ key, value })), taints: row.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
        problems: problems.map(problemView),
        nodeId: nodeIds.get(row.line) ?? null,
      }));
    const refused = results.filter((result) => result.problems.length > 0).length;
    const passing = results.filter((result) => result.problems.length === 0);
    const nothing = (): AddNodesResultType => ({ batch: null, rows: view(new Map()), added: 0, refused, problems: requestProblems.map(problemView) });
    if (input.dryRun || requestProblems.length > 0 || passing.length === 0 || (refused > 0 && !input.addValidRows)) {
      return nothing();
    }
    this.requireAgent();

    const batchId = randomUUID();
    const source = input.list !== null && input.list !== undefined ? 'LIST' : input.range ? 'RANGE' : 'ROWS';
    let created: NodeEntity[];
    try {
      created = await this.nodes.createMany(
        passing.map(({ row }, index) => ({
          clusterId: cluster.id,
          hostname: row.hostname,
          ip: row.ip,
          sshPort: row.sshPort,
          sshUser: row.sshUser,
          ...credentials.get(row.line),
          labels: row.labels.map(({ key, value }) => ({ key, value })),
          taints: row.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
          status: 'ADDING' as const,
          ...reasonFields(message('node.connecting')),
          origin: 'ADDED' as const,
          batchId,
          batchPosition: index + 1,
          batchPhase: 'ADDED' as const,
        })),
        { id: batchId, clusterId: cluster.id, createdBy: actor, source, concurrency: this.clampConcurrency(null) },
        {
          ids: [...new Set(passing.flatMap(({ row }) => (superseded.has(row.line) ? [superseded.get(row.line) ?? ''] : [])))],
          reason: message('node.supersededByBatch'),
        },
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505') {
        throw new AppError('CONFLICT', message('batch.addedMeanwhile'), {}, error);
      }
      throw error;
    }
    const ids = new Map(passing.map(({ row }, index) => [row.line, created[index].id]));
    for (const node of created) {
      await this.provisioning.schedule(node.id);
    }
    return { batch: await this.batch(batchId), rows: view(ids), added: created.length, refused, problems: [] };
  }

  /** Starts (or widens) the batch's install: every host not yet asked is queued. */
  async installBatch(batchId: string, concurrency: number | null, actor: string): Promise<NodeBatchType> {
    const batch = await this.getEntity(batchId);
    // Refused before any host is queued: none would get past DOWNLOAD_BINARIES.
    await this.readiness(batch.clusterId);
    await this.batches.update(batch.id, { concurrency: this.clampConcurrency(concurrency ?? batch.concurrency), installRequestedBy: actor, installRequestedAt: new Date() });
    const queued = await this.movePhase(batch.id, ['ADDED'], 'QUEUED');
    if (queued === 0 && !(await this.hasOpenHosts(batch.id))) {
      throw new PreconditionError(message('batch.allAsked'));
    }
    await this.installer.kick(batch.id);
    return this.batch(batch.id);
  }

  /**
   * Installs hosts already added and checked (a node group's scale-up) as a batch of their own:
   * the same installer, concurrency and phases as any batch. The hosts move out of the batch they
   * were added with.
   */
  async installHosts(clusterId: string, nodeIds: readonly string[], actor: string, source: 'AUTOSCALER' | 'INVENTORY' = 'AUTOSCALER'): Promise<NodeBatchType> {
    const batchId = randomUUID();
    await this.batches.createOf({ id: batchId, clusterId, createdBy: actor, source, concurrency: this.clampConcurrency(null) }, nodeIds);
    return this.installBatch(batchId, null, actor);
  }

  /** Queues the failed hosts again: those whose checks failed connect again first; failed installs resume at their failed step. */
  async retryFailed(batchId: string, actor: string): Promise<NodeBatchType> {
    const batch = await this.getEntity(batchId);
    const failed = await this.batches.hostsIn(batch.id, 'FAILED');
    if (failed.length === 0) {
      throw new PreconditionError(message('batch.noneFailed'));
    }
    await this.readiness(batch.clusterId);
    for (const node of failed) {
      // Connecting again before it is queued: a pass that saw it queued with its old failed status would fail it at once.
      const reconnect = RECONNECT_FIRST.has(node.status);
      if (reconnect) {
        await this.nodes.transition(node.id, 'RECONNECT_REQUESTED', message('node.connectingAgain', { actor }));
      }
      await this.batches.setPhase(node.id, 'FAILED', 'QUEUED');
      if (reconnect) {
        await this.provisioning.schedule(node.id);
      }
    }
    await this.batches.update(batch.id, { installRequestedBy: actor, installRequestedAt: batch.installRequestedAt ?? new Date() });
    await this.installer.kick(batch.id);
    return this.batch(batch.id);
  }

  /** Takes every host that has not started yet out of the queue; running installs go on. */
  async cancelRemaining(batchId: string): Promise<NodeBatchType> {
    const batch = await this.getEntity(batchId);
    const cancelled = await this.movePhase(batch.id, ['ADDED', 'QUEUED', 'HELD'], 'CANCELLED');
    if (cancelled === 0) {
      throw new PreconditionError(message('batch.noneWaiting'));
    }
    await this.installer.kick(batch.id);
    return this.batch(batch.id);
  }

  async batch(batchId: string): Promise<NodeBatchType> {
    const batch = await this.getEntity(batchId);
    const nodes = await this.batches.hostsOf(batch.id);
    const installing = nodes.filter((node) => node.status === 'INSTALLING' || node.status === 'STALLED').map((node) => node.id);
    const running = await this.runs.runningInstalls(installing);
    const hosts: BatchHostType[] = nodes.map((node) => ({
      nodeId: node.id,
      position: node.batchPosition ?? 0,
      hostname: node.hostname,
      ip: node.ip,
      phase: node.batchPhase ?? 'ADDED',
      status: node.status,
      statusReason: node.statusReason,
      statusReasonCode: node.statusReasonCoded?.code ?? null,
      statusReasonParams: node.statusReasonCoded?.params ?? null,
      step: running.get(node.id)?.step ?? null,
      labels: node.labels.map(({ key, value }) => ({ key, value })),
      taints: node.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
      verdict: toHostVerdictType(node),
    }));
    const counts = countBatch(hosts.map((host) => host.phase));
    const bySteps = new Map<InstallStep, number>();
    for (const host of hosts) {
      if (host.phase === 'ACTIVE' && host.step) {
        bySteps.set(host.step, (bySteps.get(host.step) ?? 0) + 1);
      }
    }
    return {
      id: batch.id,
      clusterId: batch.clusterId,
      state: batchState(counts),
      concurrency: batch.concurrency,
      createdBy: batch.createdBy,
      createdAt: batch.createdAt,
      installRequestedAt: batch.installRequestedAt,
      progress: {
        ...counts,
        installingBySteps: [...bySteps].map(([step, count]) => ({ step, hosts: count })),
        waitingForSlot: hosts.filter((host) => host.phase === 'ACTIVE' && running.get(host.nodeId)?.waitingForSlot).length,
        failures: hosts.filter((host) => host.phase === 'FAILED').map((host) => ({ nodeId: host.nodeId, hostname: host.hostname, reason: host.statusReason ?? host.status })),
      },
      hosts,
    };
  }

  async batchesOf(clusterId: string): Promise<NodeBatchType[]> {
    if (!isUuid(clusterId)) {
      throw new NotFoundError('cluster', clusterId);
    }
    const batches = await this.batches.latestOf(clusterId);
    return Promise.all(batches.map((batch) => this.batch(batch.id)));
  }

  /** Node ids of a batch (for its progress subscription). */
  async memberIds(batchId: string): Promise<{ clusterId: string; nodeIds: string[] }> {
    const batch = await this.getEntity(batchId);
    return { clusterId: batch.clusterId, nodeIds: await this.batches.hostIdsOf(batch.id) };
  }

  private async getEntity(batchId: string): Promise<NodeBatchEntity> {
    const batch = await this.batches.find(batchId);
    if (!batch) {
      throw new NotFoundError('batch', batchId);
    }
    return batch;
  }

  private async movePhase(batchId: string, from: BatchPhase[], to: BatchPhase): Promise<number> {
    return this.batches.movePhase(batchId, from, to);
  }

  private async hasOpenHosts(batchId: string): Promise<boolean> {
    return (await this.batches.countIn(batchId, ['QUEUED', 'ACTIVE'])) > 0;
  }

  private clampConcurrency(wanted: number | null): number {
    const value = wanted ?? this.defaultConcurrency;
    if (!Number.isInteger(value) || value < 1 || value > MAX_BATCH_CONCURRENCY) {
      throw new BadUserInputError('concurrency', message('validation.wholeNumberRange', { min: 1, max: MAX_BATCH_CONCURRENCY }));
    }
    return value;
  }

  private credentialsOrProblem(input: { password?: string | null; privateKey?: string | null; passphrase?: string | null }, problems: BulkProblem[]): SshCredentials | null {
    try {
      return credentialsFrom(input);
    } catch (error) {
      // The error's message starts with its field (input.privateKey …); the row names the field once, without input.
      const extensions = error instanceof AppError ? error.extensions : {};
      const field = typeof extensions['field'] === 'string' ? extensions['field'].replace(/^input\./, '') : 'credentials';
      const problemCode = extensions['problemCode'];
      if (isMessageCode(problemCode)) {
        const text = message('error.badInput', { field, problem: { code: problemCode, params: (extensions['problemParams'] ?? {}) as MessageParams } });
        problems.push({ field: 'credentials', message: text.message, coded: bare(text) });
      } else {
        problems.push({ field: 'credentials', message: (error instanceof Error ? error.message : String(error)).replace(/^input\./, '') });
      }
      return null;
    }
  }

  private requireAgent(): AgentBinary {
    const agent = this.agent();
    if (!agent) {
      throw new PreconditionError(message('node.noAgentBinary'));
    }
    return agent;
  }
}
