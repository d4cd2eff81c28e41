/**
 * Hosts that were nodes before: what an earlier membership left behind, and what may be done
 * about it. The seed's rule: a node this service removed rejoins only through a fresh OS
 * install. Anything else left over can be cleaned, but only on an operator's confirmation —
 * a host with leftovers is never joined silently.
 */
export const LEFTOVER_KINDS = [
  /** Kubelet client/serving certificates under /var/lib/kubelet/pki. */
  'KUBELET_CERTIFICATES',
  /** A kubelet kubeconfig or bootstrap kubeconfig under /etc/kubernetes. */
  'KUBECONFIG',
  /** Anything else under /etc/kubernetes (manifests, CA, ...). */
  'KUBERNETES_FILES',
  /** A kubelet service that is running or enabled. */
  'KUBELET_SERVICE',
  /** A Node under the host's name in the cluster. */
  'CLUSTER_NODE',
  /** Certificate signing requests of that node name in the cluster. */
  'CLUSTER_CSRS',
  /** The host's machine-id is the one of a node this service removed. */
  'REMOVED_MACHINE',
] as const;
export type LeftoverKind = (typeof LEFTOVER_KINDS)[number];

export interface Leftover {
  readonly kind: LeftoverKind;
  /** What exactly: a path, a unit, an object name. */
  readonly item: string;
}

export type HostVerdictKind = 'CLEAN' | 'CLEANABLE' | 'REINSTALL_REQUIRED';

export interface HostVerdict {
  readonly verdict: HostVerdictKind;
  /** Everything found; for CLEANABLE exactly what cleanup would remove. */
  readonly leftovers: readonly Leftover[];
  readonly reason: string;
  readonly checkedAt: string;
  /** When an operator confirmed the cleanup and it ran. */
  readonly cleanedAt?: string | null;
}

/** Leftovers that decide on their own that only a fresh OS install will do. */
const REINSTALL_KINDS: readonly LeftoverKind[] = ['REMOVED_MACHINE'];

/** A Node under that name that is Ready belongs to a live member: cleaning it would remove a working node. */
export function decideHostVerdict(leftovers: readonly Leftover[], options: { readonly liveNodeNamed?: boolean; readonly at?: Date } = {}): HostVerdict {
  const checkedAt = (options.at ?? new Date()).toISOString();
  const reinstall = leftovers.filter((leftover) => REINSTALL_KINDS.includes(leftover.kind));
  if (reinstall.length > 0) {
    return { verdict: 'REINSTALL_REQUIRED', leftovers, checkedAt, reason: 'this host was a node this service removed; it rejoins only after a fresh OS install' };
  }
  if (options.liveNodeNamed) {
    return { verdict: 'REINSTALL_REQUIRED', leftovers, checkedAt, reason: 'a Ready Node of this name is in the cluster; give the host another name or reinstall it' };
  }
  if (leftovers.length > 0) {
    const kinds = [...new Set(leftovers.map((leftover) => leftover.kind.toLowerCase().replace(/_/g, ' ')))];
    return { verdict: 'CLEANABLE', leftovers, checkedAt, reason: `leftovers of an earlier membership (${kinds.join(', ')}); an operator must confirm their cleanup before install` };
  }
  return { verdict: 'CLEAN', leftovers, checkedAt, reason: 'no leftovers of an earlier membership' };
}

/** Whether an install may start: a clean host, or a cleanable one whose cleanup ran. */
export function verdictAllowsInstall(verdict: HostVerdict | null): boolean {
  return verdict === null || verdict.verdict === 'CLEAN' || (verdict.verdict === 'CLEANABLE' && Boolean(verdict.cleanedAt));
}
