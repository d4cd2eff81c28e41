import { stringify } from 'yaml';
import { GIB } from './inventory-document';
import type { CurrentNode, CurrentPools } from './inventory-plan';
import { INVENTORY_API_VERSION, INVENTORY_KIND } from './inventory.schema';

export interface ExportedNode extends CurrentNode {
  readonly sshPort: number;
  readonly sshUser: string | null;
}

const labelMap = (labels: CurrentNode['labels']) => Object.fromEntries([...labels].sort((a, b) => a.key.localeCompare(b.key)).map((label) => [label.key, label.value]));
const taintList = (taints: CurrentNode['taints']) => taints.map((taint) => ({ key: taint.key, ...(taint.value ? { value: taint.value } : {}), effect: taint.effect }));

/**
 * The pools of a cluster and the hosts this service added to it and has not removed, as an
 * inventory file that plans to no change. A pool's members name their pool instead of labels.
 * Credentials are not exported (they are sealed, and only a host to add needs one): a file that
 * adds hosts names where its credential is read.
 */
export function exportInventory(cluster: string, nodes: readonly ExportedNode[], current: CurrentPools = { pools: [], memberships: new Map() }): string {
  const pools = [...current.pools]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((pool) => ({
      name: pool.name,
      minSize: pool.minSize,
      maxSize: pool.maxSize,
      profile: {
        cpuCores: pool.profile.cpuCores,
        memoryGiB: pool.profile.memoryBytes / GIB,
        ephemeralStorageGiB: pool.profile.ephemeralStorageBytes / GIB,
        maxPods: pool.profile.maxPods,
        arch: pool.profile.arch,
      },
      ...(pool.labels.length > 0 ? { labels: labelMap(pool.labels) } : {}),
      ...(pool.taints.length > 0 ? { taints: taintList(pool.taints) } : {}),
    }));
  const hosts = nodes
    .filter((node) => node.origin === 'ADDED' && node.status !== 'REMOVED' && node.ip !== null)
    .sort((a, b) => a.hostname.localeCompare(b.hostname))
    .map((node) => ({
      hostname: node.hostname,
      ip: node.ip,
      ...(node.sshPort !== 22 ? { sshPort: node.sshPort } : {}),
      ...(node.sshUser && node.sshUser !== 'root' ? { sshUser: node.sshUser } : {}),
      ...poolOrMarks(node, current.memberships.get(node.id)),
    }));
  return stringify({ apiVersion: INVENTORY_API_VERSION, kind: INVENTORY_KIND, cluster, ...(pools.length > 0 ? { pools } : {}), hosts }, { lineWidth: 0 });
}

function poolOrMarks(node: ExportedNode, pool: string | undefined): Record<string, unknown> {
  if (pool) {
    return { pool };
  }
  return { ...(node.labels.length > 0 ? { labels: labelMap(node.labels) } : {}), ...(node.taints.length > 0 ? { taints: taintList(node.taints) } : {}) };
}
