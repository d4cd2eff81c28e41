import { createHash } from 'node:crypto';
import type { Label, NodeOrigin, NodeStatus, Taint } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import { GIB, type Inventory, type InventoryHost, type InventoryPool } from './inventory-document';

/** A node of the cluster as the plan compares it with the file. */
export interface CurrentNode {
  readonly id: string;
  readonly hostname: string;
  readonly ip: string | null;
  readonly status: NodeStatus;
  readonly origin: NodeOrigin;
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
}

/** A node group of the cluster as the plan compares it with the file. */
export type CurrentPool = InventoryPool;

/** The cluster's pools and which of its nodes are their members (by node id, the pool's name). */
export interface CurrentPools {
  readonly pools: readonly CurrentPool[];
  readonly memberships: ReadonlyMap<string, string>;
}

const NO_POOLS: CurrentPools = { pools: [], memberships: new Map() };

export interface MarksChange {
  readonly from: { readonly labels: readonly Label[]; readonly taints: readonly Taint[] };
  readonly to: { readonly labels: readonly Label[]; readonly taints: readonly Taint[] };
}

/**
 * One thing apply does. CREATE_POOL creates a node group (ADMIN); ADD_SPARE enters a host as a
 * spare of a pool (installed when the pool scales up); ADD enters the host and installs it (one
 * batch for all of a plan's adds);
 * INSTALL installs a host whose record waits for it; RELABEL sets the labels and taints this
 * service manages; REMOVE takes a member out (cordon, drain, delete, clean the host); FORGET
 * deletes the record of a host that never joined.
 */
export type InventoryChange =
  | { readonly kind: 'CREATE_POOL'; readonly hostname: null; readonly pool: InventoryPool }
  | { readonly kind: 'ADD'; readonly hostname: string; readonly host: InventoryHost }
  | { readonly kind: 'ADD_SPARE'; readonly hostname: string; readonly host: InventoryHost; readonly pool: string }
  | { readonly kind: 'INSTALL'; readonly hostname: string; readonly nodeId: string }
  | { readonly kind: 'RELABEL'; readonly hostname: string; readonly nodeId: string; readonly marks: MarksChange }
  | { readonly kind: 'REMOVE'; readonly hostname: string; readonly nodeId: string }
  | { readonly kind: 'FORGET'; readonly hostname: string; readonly nodeId: string };

/** A host the file names that needs an operator, not apply: its status says why (a failed install, a host key that changed). */
export interface InventoryAttention {
  readonly hostname: string;
  readonly nodeId: string;
  readonly status: NodeStatus;
}

export interface InventoryPlan {
  readonly changes: readonly InventoryChange[];
  /** Why the plan cannot be applied as it stands (an address that moved, a discovered node to relabel); apply refuses while any is left. */
  readonly conflicts: readonly CodedText[];
  readonly attention: readonly InventoryAttention[];
  /** Hosts the file names that are already as it says. */
  readonly unchanged: number;
  /** The state of the named nodes the plan was made from: apply goes ahead only while it is the same. */
  readonly fingerprint: string;
}

/** Statuses that are no membership and no record in use: the name may be added again. */
const GONE: readonly NodeStatus[] = ['REMOVED'];
const WAITING_FOR_INSTALL: readonly NodeStatus[] = ['READY_TO_INSTALL'];
const NEEDS_OPERATOR: readonly NodeStatus[] = ['AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED', 'INSTALL_FAILED', 'STALLED', 'DRAIN_FAILED'];
const MEMBER: readonly NodeStatus[] = ['JOINED', 'DRAIN_FAILED'];
const NEVER_JOINED: readonly NodeStatus[] = ['ADDING', 'READY_TO_INSTALL', 'AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED', 'INSTALL_FAILED'];

const labelKey = (label: Label) => `${label.key}=${label.value}`;
const taintKey = (taint: Taint) => `${taint.key}=${taint.value ?? ''}:${taint.effect}`;
const sameSet = <T>(a: readonly T[], b: readonly T[], key: (item: T) => string) => {
  const keys = new Set(a.map(key));
  return a.length === b.length && b.every((item) => keys.has(key(item)));
};

/**
 * What applying the file would change, by comparing each host it names with the cluster's
 * record of that name. Hosts it does not name are left alone; a host already as the file says
 * is no change, so applying an applied file changes nothing.
 */
export function planInventory(inventory: Inventory, nodes: readonly CurrentNode[], current: CurrentPools = NO_POOLS): InventoryPlan {
  const active = nodes.filter((node) => !GONE.includes(node.status));
  const byName = new Map(active.map((node) => [node.hostname, node]));
  const changes: InventoryChange[] = [];
  const conflicts: CodedText[] = [];
  const attention: InventoryAttention[] = [];
  const named: CurrentNode[] = [];
  const namedPools: CurrentPool[] = [];
  let unchanged = 0;
  for (const pool of inventory.pools) {
    const existing = current.pools.find((entry) => entry.name === pool.name);
    if (!existing) {
      changes.push({ kind: 'CREATE_POOL', hostname: null, pool });
      continue;
    }
    namedPools.push(existing);
    const differences = poolDifferences(existing, pool);
    if (differences.length > 0) {
      conflicts.push(message('inventory.poolDiffers', { pool: pool.name, fields: differences.join(', ') }));
    }
  }
  for (const host of inventory.hosts) {
    const node = byName.get(host.hostname);
    if (node) {
      named.push(node);
    }
    const membership = node ? (current.memberships.get(node.id) ?? null) : null;
    if (host.remove) {
      if (membership) {
        conflicts.push(message('inventory.poolMemberRemove', { hostname: host.hostname, pool: membership }));
      } else if (!node || node.status === 'REMOVING') {
        unchanged += 1;
      } else if (MEMBER.includes(node.status)) {
        changes.push({ kind: 'REMOVE', hostname: host.hostname, nodeId: node.id });
      } else if (NEVER_JOINED.includes(node.status)) {
        changes.push({ kind: 'FORGET', hostname: host.hostname, nodeId: node.id });
      } else {
        attention.push({ hostname: host.hostname, nodeId: node.id, status: node.status });
      }
      continue;
    }
    if (node && membership !== host.pool) {
      conflicts.push(
        message('inventory.poolMembership', {
          hostname: host.hostname,
          current: membership ? message('inventory.inPool', { pool: membership }) : message('inventory.noPool'),
          wanted: host.pool ? message('inventory.inPool', { pool: host.pool }) : message('inventory.noPool'),
        }),
      );
      continue;
    }
    if (node && host.pool !== null) {
      // A pool's member: its labels are the pool's, its installs the pool's scale-ups.
      unchanged += 1;
      continue;
    }
    if (!node) {
      const holder = active.find((other) => other.ip === host.ip);
      if (holder) {
        named.push(holder);
        conflicts.push(message('inventory.addressTaken', { ip: host.ip ?? '', other: holder.hostname }));
      } else if (host.pool !== null) {
        changes.push({ kind: 'ADD_SPARE', hostname: host.hostname, host, pool: host.pool });
      } else {
        changes.push({ kind: 'ADD', hostname: host.hostname, host });
      }
      continue;
    }
    if (node.ip !== null && node.ip !== host.ip) {
      conflicts.push(message('inventory.ipChanged', { hostname: host.hostname, current: node.ip, wanted: host.ip ?? '' }));
      continue;
    }
    const marksSame = sameSet(node.labels, host.labels, labelKey) && sameSet(node.taints, host.taints, taintKey);
    if (!marksSame && node.origin === 'DISCOVERED') {
      conflicts.push(message('inventory.discovered', { hostname: host.hostname }));
      continue;
    }
    let changed = false;
    if (!marksSame) {
      changes.push({ kind: 'RELABEL', hostname: host.hostname, nodeId: node.id, marks: { from: { labels: node.labels, taints: node.taints }, to: { labels: host.labels, taints: host.taints } } });
      changed = true;
    }
    if (WAITING_FOR_INSTALL.includes(node.status)) {
      changes.push({ kind: 'INSTALL', hostname: host.hostname, nodeId: node.id });
      changed = true;
    } else if (NEEDS_OPERATOR.includes(node.status)) {
      attention.push({ hostname: host.hostname, nodeId: node.id, status: node.status });
    }
    unchanged += changed ? 0 : 1;
  }
  return { changes, conflicts, attention, unchanged, fingerprint: fingerprintOf(named, namedPools, current.memberships) };
}

/** What differs between a pool of the cluster and the file's, as `maxSize 3 → 5`. */
function poolDifferences(existing: CurrentPool, wanted: InventoryPool): string[] {
  const fields: Array<[string, string, string]> = [
    ['minSize', String(existing.minSize), String(wanted.minSize)],
    ['maxSize', String(existing.maxSize), String(wanted.maxSize)],
    ['cpuCores', String(existing.profile.cpuCores), String(wanted.profile.cpuCores)],
    ['memoryGiB', gib(existing.profile.memoryBytes), gib(wanted.profile.memoryBytes)],
    ['ephemeralStorageGiB', gib(existing.profile.ephemeralStorageBytes), gib(wanted.profile.ephemeralStorageBytes)],
    ['maxPods', String(existing.profile.maxPods), String(wanted.profile.maxPods)],
    ['arch', existing.profile.arch, wanted.profile.arch],
    ['labels', [...existing.labels].map(labelKey).sort().join(','), [...wanted.labels].map(labelKey).sort().join(',')],
    ['taints', [...existing.taints].map(taintKey).sort().join(','), [...wanted.taints].map(taintKey).sort().join(',')],
  ];
  return fields.filter(([, was, now]) => was !== now).map(([field, was, now]) => `${field} ${was || '-'} → ${now || '-'}`);
}

function gib(bytes: number): string {
  return String(Number((bytes / GIB).toFixed(2)));
}

/** A digest of what the plan read of each node and pool it names: any change to them in between makes apply refuse. */
export function fingerprintOf(nodes: readonly CurrentNode[], pools: readonly CurrentPool[] = [], memberships: ReadonlyMap<string, string> = new Map()): string {
  const state = [...nodes]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((node) => [node.id, node.hostname, node.ip, node.status, [...node.labels].map(labelKey).sort(), [...node.taints].map(taintKey).sort(), memberships.get(node.id) ?? null]);
  const poolState = [...pools]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((pool) => [pool.name, pool.minSize, pool.maxSize, pool.profile, [...pool.labels].map(labelKey).sort(), [...pool.taints].map(taintKey).sort()]);
  return createHash('sha256').update(JSON.stringify([state, poolState])).digest('hex').slice(0, 32);
}
