import type { ClusterEntity, ClusterStore, NodeGroupStore, NodeStore } from '@ccos/api/data-access-db';
import { AppError, BadUserInputError, ConflictError, DEFAULT_REMOVAL_OPTIONS, PreconditionError, type RemovalOptions, type RoleLabelAuthority } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import { type Inventory, type InventoryHost, type InventoryPool, parseInventory } from './inventory-document';
import { exportInventory } from './inventory-export';
import { type CurrentPools, type InventoryChange, type InventoryPlan, planInventory } from './inventory-plan';

/**
 * How a host the file takes out is removed: kubectl drain's safe defaults (a pod no controller
 * would bring back stops it, PodDisruptionBudgets are honoured) with DaemonSet pods left and
 * emptyDir data deleted, as cluster-autoscaler removes nodes; then the host is cleaned.
 */
export const INVENTORY_REMOVAL_OPTIONS: RemovalOptions = { ...DEFAULT_REMOVAL_OPTIONS, ignoreDaemonSets: true, deleteEmptyDirData: true, cleanHost: true };

/** A host's SSH secret, read by the applying machine from where the file says. */
export interface InventoryCredential {
  readonly hostname: string;
  readonly password?: string | null;
  readonly privateKey?: string | null;
  readonly passphrase?: string | null;
}

/** What a removal would do, as the plan shows it beside a REMOVE. */
export interface RemovalSummary {
  readonly allowed: boolean;
  readonly refusal: CodedText | null;
  readonly evict: number;
  readonly skip: number;
  readonly refuse: number;
}

export interface NewInventoryHost {
  readonly clusterId: string;
  readonly hostname: string;
  readonly ip: string;
  readonly sshPort: number;
  readonly sshUser: string;
  readonly labels: InventoryHost['labels'];
  readonly taints: InventoryHost['taints'];
  readonly password: string | null;
  readonly privateKey: string | null;
  readonly passphrase: string | null;
}

/** The existing paths apply goes through (the node, batch, removal and autoscaling features), wired by the app. */
export interface InventoryPorts {
  /** createNodeGroup (the caller is an ADMIN: apply checks it first). */
  createPool(clusterId: string, pool: InventoryPool, actor: string, by: RoleLabelAuthority): Promise<void>;
  /** addNodeGroupSpare: the host through addNode's checks, waiting in the pool. */
  addSpare(clusterId: string, pool: string, host: Omit<NewInventoryHost, 'clusterId' | 'labels' | 'taints'>, actor: string): Promise<void>;
  /** addNode: the same checks; resolves to the new node's id. */
  addHost(host: NewInventoryHost, by: RoleLabelAuthority): Promise<string>;
  /** Installs added hosts as one batch (they are installed once their checks pass); resolves to its id. */
  installHosts(clusterId: string, nodeIds: readonly string[], actor: string): Promise<string>;
  setMarks(nodeId: string, marks: { labels: InventoryHost['labels']; taints: InventoryHost['taints'] }, by: RoleLabelAuthority): Promise<void>;
  removalPreview(nodeId: string, options: RemovalOptions): Promise<RemovalSummary>;
  /** Starts the removal the preview showed; resolves to its run's id. */
  startRemoval(nodeId: string, options: RemovalOptions, actor: string): Promise<string>;
  /** Deletes the record of a host that never joined. */
  forget(nodeId: string): Promise<void>;
}

export interface PlannedInventory {
  readonly cluster: Pick<ClusterEntity, 'id' | 'name'>;
  readonly plan: InventoryPlan;
  /** By node id, for each REMOVE. */
  readonly removals: ReadonlyMap<string, RemovalSummary>;
}

export interface AppliedInventory extends PlannedInventory {
  /** The batch that installs the plan's ADD and INSTALL hosts; null when there are none. */
  readonly batchId: string | null;
  readonly removalRunIds: readonly string[];
}

/**
 * Declarative inventory: a file names the workers a cluster should have; plan says what applying
 * it would change, apply does exactly that through the paths a click takes, export writes the
 * current state as a file. The file is checked whole before anything is read from the cluster.
 */
export class InventoryService {
  constructor(
    private readonly clusters: ClusterStore,
    private readonly nodes: NodeStore,
    private readonly pools: NodeGroupStore,
    private readonly ports: InventoryPorts,
  ) {}

  async plan(document: string): Promise<PlannedInventory> {
    const inventory = readInventory(document);
    const cluster = await this.clusterNamed(inventory.cluster);
    const plan = planInventory(inventory, await this.nodes.listOf(cluster.id), await this.poolsOf(cluster.id));
    const removals = new Map<string, RemovalSummary>();
    for (const change of plan.changes) {
      if (change.kind === 'REMOVE') {
        removals.set(change.nodeId, await this.ports.removalPreview(change.nodeId, INVENTORY_REMOVAL_OPTIONS));
      }
    }
    return { cluster: { id: cluster.id, name: cluster.name }, plan, removals };
  }

  /**
   * Applies the file if the nodes it names are still as they were when `fingerprint`'s plan was
   * made. Everything that can be checked is checked before the first change: conflicts, a
   * credential for every host to add, every removal's preview. A failure of one step after that
   * stops apply there; planning again shows what is left.
   */
  async apply(document: string, fingerprint: string, credentials: readonly InventoryCredential[], actor: string, by: RoleLabelAuthority): Promise<AppliedInventory> {
    const planned = await this.plan(document);
    const { plan, cluster } = planned;
    if (plan.fingerprint !== fingerprint) {
      throw new ConflictError(message('inventory.changedSincePlan'), { reason: 'CHANGED_SINCE_PLAN' });
    }
    if (plan.conflicts.length > 0) {
      throw new PreconditionError(message('inventory.refused', { problems: plan.conflicts }));
    }
    const newPools = plan.changes.flatMap((change) => (change.kind === 'CREATE_POOL' ? [change.pool.name] : []));
    if (newPools.length > 0 && by.role !== 'ADMIN') {
      throw new AppError('FORBIDDEN', message('inventory.poolsNeedAdmin', { pools: newPools.join(', '), held: by.role }), { requiredRole: 'ADMIN' });
    }
    const secrets = new Map(credentials.map((credential) => [credential.hostname, credential]));
    for (const change of plan.changes) {
      if ((change.kind === 'ADD' || change.kind === 'ADD_SPARE') && !hasSecret(secrets.get(change.hostname))) {
        throw new BadUserInputError('credentials', message('inventory.noCredential', { hostname: change.hostname }));
      }
      const removal = change.kind === 'REMOVE' ? planned.removals.get(change.nodeId) : undefined;
      if (removal && !removal.allowed) {
        throw new PreconditionError(removal.refusal ?? message('inventory.refused', { problems: [] }));
      }
    }
    const toInstall: string[] = [];
    const removalRunIds: string[] = [];
    for (const change of ordered(plan.changes)) {
      switch (change.kind) {
        case 'CREATE_POOL':
          await this.ports.createPool(cluster.id, change.pool, actor, by);
          break;
        case 'ADD_SPARE':
          await this.ports.addSpare(cluster.id, change.pool, accessOf(change.host, secrets.get(change.hostname)), actor);
          break;
        case 'FORGET':
          await this.ports.forget(change.nodeId);
          break;
        case 'RELABEL':
          await this.ports.setMarks(change.nodeId, change.marks.to, by);
          break;
        case 'ADD':
          toInstall.push(await this.ports.addHost({ ...accessOf(change.host, secrets.get(change.hostname)), clusterId: cluster.id, labels: change.host.labels, taints: change.host.taints }, by));
          break;
        case 'INSTALL':
          toInstall.push(change.nodeId);
          break;
        case 'REMOVE':
          removalRunIds.push(await this.ports.startRemoval(change.nodeId, INVENTORY_REMOVAL_OPTIONS, actor));
          break;
      }
    }
    const batchId = toInstall.length > 0 ? await this.ports.installHosts(cluster.id, toInstall, actor) : null;
    return { ...planned, batchId, removalRunIds };
  }

  /** The cluster's pools and hosts added here, as a file that plans to no change. */
  async export(clusterId: string): Promise<string> {
    const cluster = await this.clusters.get(clusterId);
    const nodes = await this.nodes.listOf(cluster.id);
    return exportInventory(cluster.name, nodes.map((node) => ({ ...node, sshUser: node.sshUser ?? null })), await this.poolsOf(cluster.id));
  }

  private async poolsOf(clusterId: string): Promise<CurrentPools> {
    const groups = await this.pools.groupsOf(clusterId);
    const names = new Map(groups.map((group) => [group.id, group.name]));
    const members = await this.pools.currentMembersOf(groups.map((group) => group.id));
    const memberships = new Map(members.map((member) => [member.nodeId, names.get(member.groupId) ?? '']));
    return {
      pools: groups.map((group) => ({ name: group.name, minSize: group.minSize, maxSize: group.maxSize, profile: { ...group.profile }, labels: group.labels, taints: group.taints })),
      memberships,
    };
  }

  private async clusterNamed(name: string): Promise<ClusterEntity> {
    const cluster = await this.clusters.findNamed(name);
    if (!cluster) {
      throw new AppError('NOT_FOUND', message('inventory.unknownCluster', { cluster: name }), { kind: 'cluster' });
    }
    return cluster;
  }
}

/** The file, or BAD_USER_INPUT naming every problem in it. */
function readInventory(document: string): Inventory {
  const parsed = parseInventory(document);
  if (!parsed.ok) {
    throw new BadUserInputError('document', message('inventory.refused', { problems: parsed.problems }));
  }
  return parsed.inventory;
}

/** How the service reaches a host the file adds: its address and SSH user, and the secret sent for it. */
function accessOf(host: InventoryHost, secret: InventoryCredential | undefined): Omit<NewInventoryHost, 'clusterId' | 'labels' | 'taints'> {
  return {
    hostname: host.hostname,
    ip: host.ip ?? '',
    sshPort: host.sshPort,
    sshUser: host.sshUser,
    password: secret?.password ?? null,
    privateKey: secret?.privateKey ?? null,
    passphrase: secret?.passphrase ?? null,
  };
}

function hasSecret(credential: InventoryCredential | undefined): boolean {
  return Boolean(credential?.password || credential?.privateKey);
}

/** Pools first (their spares need them), records that free names, then label changes, adds, and removals last. */
function ordered(changes: readonly InventoryChange[]): InventoryChange[] {
  const rank: Record<InventoryChange['kind'], number> = { CREATE_POOL: 0, FORGET: 1, RELABEL: 2, ADD: 3, ADD_SPARE: 4, INSTALL: 5, REMOVE: 6 };
  return [...changes].sort((a, b) => rank[a.kind] - rank[b.kind]);
}
