import type { ClustersQuery } from '@ccos/shared/api-schema';

/** A registered cluster as the console shows it (the ClusterFields fragment). */
export type Cluster = ClustersQuery['clusters'][number];

export function byClusterName(a: Cluster, b: Cluster): number {
  return a.name.localeCompare(b.name);
}
