import { type ClusterStore, type NodeEntity, type NodeStore, isUuid, reasonFields, uniqueViolationOf } from '@ccos/api/data-access-db';
import { type AgentBinary, credentialsFrom, sealCredentials } from '@ccos/api/data-access-hosts';
import { ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { AppError, BadUserInputError, checkPageSize, FieldConflictError, NotFoundError, PreconditionError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type Label, type NodeStatus, type Role, type RoleLabelAuthority, type Taint, canonicalIp, checkNodeLabels, checkTaints, countsAsJoined, mayDeleteRecord, roleLabelRefusal, statusText } from '@ccos/shared/domain';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import type { AddNodeInput, SshCredentialsInput } from './add-node.input';

/** The largest first page `nodes(first:)` serves; the whole list has no limit. */
export const MAX_NODES_PAGE = 1000;

/**
 * How long a certificate issued for a removed node's name may stay valid: kube-controller-manager's
 * default `--cluster-signing-duration` (8760h), the longest a kubelet's client or serving certificate lives.
 * @see https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/
 */
export const NODE_CERTIFICATE_LIFETIME_MS = 365 * 24 * 3600_000;

/** The records, by hostname, of those names this cluster removed after they joined, within a certificate's lifetime. */
export function removedNamesAmong(nodes: NodeStore, clusterId: string, hostnames: readonly string[]): Promise<Map<string, NodeEntity>> {
  return nodes.removedAfterJoiningSince(clusterId, hostnames, new Date(Date.now() - NODE_CERTIFICATE_LIFETIME_MS));
}

/** Why a removed-after-joining name is not added again without an ADMIN's acknowledgement. */
export function oldCertificatesMayBeValid(removed: NodeEntity): CodedText {
  const until = new Date(removed.updatedAt.getTime() + NODE_CERTIFICATE_LIFETIME_MS).toISOString();
  return message('node.oldCertificatesMayBeValid', { hostname: removed.hostname, removedAt: removed.updatedAt.toISOString(), until });
}

/** Writes the labels and taints this service manages onto a cluster's Node object. */
export interface NodeObjectMarks {
  set(clusterId: string, nodeName: string, marks: { previous: NodeMarks; desired: NodeMarks }): Promise<void>;
}

export interface NodeMarks {
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
}

/** Statuses whose labels and taints live only in the record: the install has not started yet. */
const MARKED_AT_INSTALL: readonly NodeStatus[] = ['ADDING', 'READY_TO_INSTALL', 'AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED', 'INSTALL_FAILED'];
/** Statuses whose Node object exists: the change is written there too. */
const MARKED_ON_NODE: readonly NodeStatus[] = ['JOINED', 'DRAIN_FAILED'];

/** Runs the background part of adding a node (connect, check, copy the agent). */
export interface ProvisioningQueue {
  /** Resolves once the work is durably queued. */
  schedule(nodeId: string): Promise<void>;
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
    /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES). */
    private readonly allowedNodeRoles: readonly string[] = [],
    /** Which SSH targets may be entered: the service's one address policy (ALLOW_CLUSTER_ADDRESSES). */
    private readonly addresses: ClusterAddressGuard = new ClusterAddressGuard(),
    /** The cluster side of label and taint changes on joined nodes; without it they are refused. */
    private readonly nodeObjects: NodeObjectMarks | null = null,
  ) {}

  /** `by`: the caller's role, which bounds the node-role labels it may set (see roleLabelRefusal). */
  async add(input: AddNodeInput, by: RoleLabelAuthority): Promise<NodeEntity> {
    await this.clusters.get(input.clusterId);
    await this.requireAcknowledgedOldCertificates(input, by.role);
    const labelProblem = checkNodeLabels(input.labels);
    const problem = labelProblem ?? checkTaints(input.taints);
    if (problem) {
      throw new BadUserInputError(labelProblem ? 'input.labels' : 'input.taints', problem);
    }
    const roleRefusal = roleLabelRefusal(input.labels, this.allowedNodeRoles, { role: by.role, reason: by.reason ?? input.roleLabelReason }, 'input.roleLabelReason');
    if (roleRefusal) {
      throw roleRefusal;
    }
    // Loopback, unspecified, link-local and metadata addresses reach the service's own host or the
    // cloud's: no credentials go there (checked again before every connection, see SshPool).
    const target = this.addresses.check(input.ip, 'ssh');
    if (!target.ok) {
      throw new BadUserInputError('input.ip', target.reasonCoded);
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
    await this.provisioning.schedule(node.id);
    return node;
  }

  /**
   * Re-adding a name the cluster removed after it joined, within a certificate's lifetime: the
   * removed machine may still hold valid client and serving certificates for the name (removal
   * cannot revoke them), so it takes an ADMIN's explicit acknowledgement.
   */
  private async requireAcknowledgedOldCertificates(input: AddNodeInput, role: Role): Promise<void> {
    const removed = (await removedNamesAmong(this.nodes, input.clusterId, [input.hostname])).get(input.hostname);
    if (!removed) {
      return;
    }
    if (!input.acknowledgeOldCertificates) {
      throw new PreconditionError(oldCertificatesMayBeValid(removed), {
        reason: 'OLD_CERTIFICATES_MAY_BE_VALID',
        // The input field that lifts it: the console shows its confirmation there.
        field: 'input.acknowledgeOldCertificates',
        removedNodeId: removed.id,
        acknowledgeWith: 'acknowledgeOldCertificates',
        requiredRole: 'ADMIN',
      });
    }
    if (role !== 'ADMIN') {
      throw new AppError('FORBIDDEN', message('node.oldCertificatesNeedAdmin', { hostname: input.hostname, held: role }), { requiredRole: 'ADMIN' });
    }
  }

  /** A cluster's nodes in hostname order; with `first`, the first page only (the console's first screen). */
  async list(clusterId: string, first?: number): Promise<NodeEntity[]> {
    if (!isUuid(clusterId)) {
      throw new NotFoundError('cluster', clusterId);
    }
    if (first !== undefined) {
      checkPageSize('first', first, MAX_NODES_PAGE);
    }
    return this.nodes.listOf(clusterId, first);
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
    await this.provisioning.schedule(changed.id);
    return changed;
  }

  /** Connects again, checks the host and copies the agent again. */
  async recopyAgent(nodeId: string): Promise<NodeEntity> {
    this.requireAgent();
    const changed = await this.nodes.transition(nodeId, 'RECONNECT_REQUESTED', message('node.connectingCopyAgain'));
    await this.provisioning.schedule(changed.id);
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
    await this.provisioning.schedule(changed.id);
    return changed;
  }

  /**
   * Changes the labels and taints this service gave a node: in the record before its install
   * starts (the kubelet registers with them), on the Node object and in the record once it has
   * joined. Labels and taints set on the Node by others are left alone. Refused while an install
   * or a removal runs, since neither would see the change.
   */
  async setMarks(nodeId: string, desired: NodeMarks, by: RoleLabelAuthority): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    const labelProblem = checkNodeLabels(desired.labels);
    const problem = labelProblem ?? checkTaints(desired.taints);
    if (problem) {
      throw new BadUserInputError(labelProblem ? 'labels' : 'taints', problem);
    }
    const roleRefusal = roleLabelRefusal(desired.labels, this.allowedNodeRoles, by, 'roleLabelReason');
    if (roleRefusal) {
      throw roleRefusal;
    }
    if (node.origin === 'DISCOVERED') {
      throw new PreconditionError(message('node.marksDiscovered', { hostname: node.hostname }));
    }
    const onNode = MARKED_ON_NODE.includes(node.status);
    if (!onNode && !MARKED_AT_INSTALL.includes(node.status)) {
      throw new PreconditionError(message('node.marksNotNow', { hostname: node.hostname, status: statusText(node.status) }));
    }
    const labels = desired.labels.map(({ key, value }) => ({ key, value }));
    const taints = desired.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect }));
    if (onNode) {
      if (!this.nodeObjects) {
        throw new PreconditionError(message('node.marksNotNow', { hostname: node.hostname, status: statusText(node.status) }));
      }
      await this.nodeObjects.set(node.clusterId, node.hostname, { previous: { labels: node.labels, taints: node.taints }, desired: { labels, taints } });
    }
    const changed = await this.nodes.updateWhile(node.id, node.status, { labels, taints });
    if (!changed) {
      throw new PreconditionError(message('node.marksNotNow', { hostname: node.hostname, status: statusText((await this.nodes.get(node.id)).status) }));
    }
    return changed;
  }

  /** Forgets a node that never joined the cluster (or was removed). */
  async deleteRecord(nodeId: string): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    if (!mayDeleteRecord(node)) {
      throw new PreconditionError(
        countsAsJoined(node)
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

function supersededReason(hostname: string): CodedText {
  return message('node.supersededByAdd', { node: hostname });
}
