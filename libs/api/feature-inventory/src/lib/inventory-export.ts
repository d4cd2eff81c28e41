import { stringify } from 'yaml';
import type { CurrentNode } from './inventory-plan';
import { INVENTORY_API_VERSION, INVENTORY_KIND } from './inventory.schema';

export interface ExportedNode extends CurrentNode {
  readonly sshPort: number;
  readonly sshUser: string | null;
}

/**
 * The hosts this service added to a cluster and has not removed, as an inventory file that
 * plans to no change. Credentials are not exported (they are sealed, and only a host to add
 * needs one): a file that adds hosts names where its credential is read.
 */
export function exportInventory(cluster: string, nodes: readonly ExportedNode[]): string {
  const hosts = nodes
    .filter((node) => node.origin === 'ADDED' && node.status !== 'REMOVED' && node.ip !== null)
    .sort((a, b) => a.hostname.localeCompare(b.hostname))
    .map((node) => ({
      hostname: node.hostname,
      ip: node.ip,
      ...(node.sshPort !== 22 ? { sshPort: node.sshPort } : {}),
      ...(node.sshUser && node.sshUser !== 'root' ? { sshUser: node.sshUser } : {}),
      ...(node.labels.length > 0 ? { labels: Object.fromEntries([...node.labels].sort((a, b) => a.key.localeCompare(b.key)).map((label) => [label.key, label.value])) } : {}),
      ...(node.taints.length > 0 ? { taints: node.taints.map((taint) => ({ key: taint.key, ...(taint.value ? { value: taint.value } : {}), effect: taint.effect })) } : {}),
    }));
  return stringify({ apiVersion: INVENTORY_API_VERSION, kind: INVENTORY_KIND, cluster, hosts }, { lineWidth: 0 });
}
