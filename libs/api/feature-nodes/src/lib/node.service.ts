import { type ClusterStore, type NodeEntity, type NodeStore, isUuid, reasonFields, uniqueViolationOf } from '@ccos/api/data-access-db';
import { type AgentBinary, credentialsFrom, sealCredentials } from '@ccos/api/data-access-hosts';
import { BadUserInputError, FieldConflictError, NotFoundError, PreconditionError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { canDeleteRecord, canonicalIp, checkNodeLabels, checkTaints, statusText } from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import type { AddNodeInput, SshCredentialsInput } from './add-node.input';

/** Runs the background part of adding a node (connect, check, copy the agent). */
export interface ProvisioningQueue {
  schedule(nodeId: string): void;
}

/**
 * Entering hosts (the seed's 录入节点) and managing their records. The SSH work happens in
 * the background; every outcome is a node status with a reason.
 */
export class NodeService {
  constructor(
    private readonly clusters: ClusterStore,
    private readonly nodes: NodeStore,
    private readonly secrets: SecretBox,
    private readonly provisioning: ProvisioningQueue,
    private readonly agent: () => AgentBinary | null,
  ) {}

  async add(input: AddNodeInput): Promise<NodeEntity> {
    const cluster = await this.clusters.find(input.clusterId);
    if (!cluster) {
      throw new NotFoundError('cluster', input.clusterId);
    }
    const labelProblem = checkNodeLabels(input.labels);
    const problem = labelProblem ?? checkTaints(input.taints);
    if (problem) {
      throw new BadUserInputError(labelProblem ? 'input.labels' : 'input.taints', problem);
    }
    const credentials = credentialsFrom(input);
    this.requireAgent();
    // A Node of this name found in the cluster (the host's earlier membership, say): the added
    // record takes the name, and the provisioning lists the Node among the host's leftovers.
    const discovered = await discoveredRecordOf(this.nodes, input.clusterId, input.hostname, input.ip);
    await this.refuseDuplicates(input.clusterId, input.hostname, input.ip, discovered?.id);
    const [node] = await this.nodes
      .createMany([{
      clusterId: input.clusterId,
      hostname: input.hostname,
      ip: input.ip,
      sshPort: input.sshPort,
      sshUser: input.sshUser,
      ...sealCredentials(this.secrets, credentials),
      labels: input.labels.map(({ key, value }) => ({ key, value })),
      taints: input.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
      status: 'ADDING',
      ...reasonFields(message('node.connecting')),
      origin: 'ADDED',
    }], null, discovered ? { ids: [discovered.id], reason: supersededReason(input.hostname) } : undefined)
      .catch(async (error: unknown) => {
        // Two entries of the same host raced past the check: the unique index stopped the second.
        if (uniqueViolationOf(error)) {
          await this.refuseDuplicates(input.clusterId, input.hostname, input.ip, discovered?.id);
        }
        throw error;
      });
    this.provisioning.schedule(node.id);
    return node;
  }

  list(clusterId: string): Promise<NodeEntity[]> {
    if (!isUuid(clusterId)) {
      throw new NotFoundError('cluster', clusterId);
    }
    return this.nodes.listOf(clusterId);
  }

  get(id: string): Promise<NodeEntity> {
    return this.nodes.get(id);
  }

  /** The node, or null when its record is gone. */
  find(id: string): Promise<NodeEntity | null> {
    return this.nodes.find(id);
  }

  /** New SSH credentials, then a fresh connection attempt. */
  async updateCredentials(nodeId: string, input: SshCredentialsInput): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    const credentials = credentialsFrom(input);
    const changed = await this.nodes.transition(node.id, 'RECONNECT_REQUESTED', message('node.connectingNewCredentials'), {
      sshUser: input.sshUser,
      ...sealCredentials(this.secrets, credentials),
    });
    this.provisioning.schedule(changed.id);
    return changed;
  }

  /** Connects again, checks the host and copies the agent again. */
  async recopyAgent(nodeId: string): Promise<NodeEntity> {
    this.requireAgent();
    const changed = await this.nodes.transition(nodeId, 'RECONNECT_REQUESTED', message('node.connectingCopyAgain'));
    this.provisioning.schedule(changed.id);
    return changed;
  }

  /**
   * Trusts the host key the host now presents. The caller repeats the fingerprint it saw,
   * so a key that changed again in between is not accepted blindly.
   */
  async acceptHostKey(nodeId: string, fingerprint: string): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    if (node.status !== 'HOST_KEY_CHANGED' || !node.offeredHostKeyFingerprint) {
      throw new PreconditionError(message('node.noChangedHostKey', { hostname: node.hostname, status: statusText(node.status) }));
    }
    if (fingerprint !== node.offeredHostKeyFingerprint) {
      throw new BadUserInputError('fingerprint', message('node.fingerprintMismatch', { fingerprint: node.offeredHostKeyFingerprint }));
    }
    const changed = await this.nodes.transition(node.id, 'RECONNECT_REQUESTED', message('node.hostKeyAccepted'), {
      hostKeyFingerprint: node.offeredHostKeyFingerprint,
      offeredHostKeyFingerprint: null,
    });
    this.provisioning.schedule(changed.id);
    return changed;
  }

  /** Forgets a node that never joined the cluster (or was removed). */
  async deleteRecord(nodeId: string): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    if (!canDeleteRecord(node.status, node.everJoined)) {
      throw new PreconditionError(
        node.everJoined
          ? message('node.joinedRemoveInstead', { hostname: node.hostname })
          : message('node.busyCannotDelete', { hostname: node.hostname, status: statusText(node.status) }),
      );
    }
    await this.nodes.delete(node);
    return node;
  }

  private requireAgent(): AgentBinary {
    const agent = this.agent();
    if (!agent) {
      throw new PreconditionError(message('node.noAgentBinary'));
    }
    return agent;
  }

  /** `superseded`: the DISCOVERED record the add takes the place of, which is no clash. */
  private async refuseDuplicates(clusterId: string, hostname: string, ip: string, superseded?: string): Promise<void> {
    const clash = await this.nodes.clashOf(clusterId, hostname, ip, superseded);
    if (clash?.hostname === hostname && clash.origin === 'DISCOVERED') {
      throw new FieldConflictError('input.hostname', message('node.hostnameDiscovered', { hostname, found: clash.ip ?? bare(message('node.unknownAddress')), ip }), { nodeId: clash.id });
    }
    if (clash?.hostname === hostname) {
      throw new FieldConflictError('input.hostname', message('node.hostnameTaken', { hostname, status: statusText(clash.status) }), { nodeId: clash.id });
    }
    if (clash) {
      throw new FieldConflictError('input.ip', message('node.ipTaken', { ip, hostname: clash.hostname }), { nodeId: clash.id });
    }
  }
}

/**
 * The DISCOVERED record (a Node found in the cluster, not added here) an added host takes the
 * place of: same cluster and name, at the host's address or at none known. A Node of that name
 * at another address is another machine, and stays a clash.
 */
async function discoveredRecordOf(nodes: NodeStore, clusterId: string, hostname: string, ip: string): Promise<NodeEntity | null> {
  const found = await nodes.discoveredNamed(clusterId, hostname);
  return found && (found.ip === null || canonicalIp(found.ip) === canonicalIp(ip)) ? found : null;
}

function supersededReason(hostname: string): string {
  return `its host was added through this service; Node/${hostname} is checked as one of the host's leftovers`;
}
