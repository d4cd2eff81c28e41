import { type CodedText, type Message, bare, message } from '@ccos/shared/messages';

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
  /** What exactly, as shown: a path, a unit, `Node/<name> (Ready)`. */
  readonly item: string;
  /** The object's name in the cluster, for CLUSTER_NODE and CLUSTER_CSRS: what cleanup deletes or denies. */
  readonly name?: string;
}

export const HOST_VERDICT_KINDS = ['CLEAN', 'CLEANABLE', 'REINSTALL_REQUIRED'] as const;
export type HostVerdictKind = (typeof HOST_VERDICT_KINDS)[number];

/** Whether a verdict as a client received it (a string in GraphQL) is one the rules know. */
export function isHostVerdictKind(verdict: string): verdict is HostVerdictKind {
  return (HOST_VERDICT_KINDS as readonly string[]).includes(verdict);
}

export interface HostVerdict {
  readonly verdict: HostVerdictKind;
  /** Everything found; for CLEANABLE exactly what cleanup would remove. */
  readonly leftovers: readonly Leftover[];
  readonly reason: string;
  /** The reason's code and parameters; absent on verdicts stored before reasons were coded. */
  readonly reasonCoded?: Message | null;
  readonly checkedAt: string;
  /** When an operator confirmed the cleanup and it ran. */
  readonly cleanedAt?: string | null;
  /** The last cleanup asked for (a job on a worker): which request, when it ended, and why it did not clean when it did not. */
  readonly lastCleanup?: { readonly requestId: string; readonly at: string; readonly problem: Message | null } | null;
}

/** Leftovers that decide on their own that only a fresh OS install will do. */
const REINSTALL_KINDS: readonly LeftoverKind[] = ['REMOVED_MACHINE'];

/** A Node under that name that is Ready belongs to a live member: cleaning it would remove a working node. */
export function decideHostVerdict(leftovers: readonly Leftover[], options: { readonly liveNodeNamed?: boolean; readonly at?: Date } = {}): HostVerdict {
  const checkedAt = (options.at ?? new Date()).toISOString();
  const verdict = (kind: HostVerdictKind, reason: CodedText): HostVerdict => ({ verdict: kind, leftovers, checkedAt, reason: reason.message, reasonCoded: bare(reason) });
  const reinstall = leftovers.filter((leftover) => REINSTALL_KINDS.includes(leftover.kind));
  if (reinstall.length > 0) {
    return verdict('REINSTALL_REQUIRED', message('host.removedMachine'));
  }
  if (options.liveNodeNamed) {
    return verdict('REINSTALL_REQUIRED', message('host.liveNodeNamed'));
  }
  if (leftovers.length > 0) {
    const kinds = [...new Set(leftovers.map((leftover) => leftover.kind))];
    return verdict('CLEANABLE', message('host.leftovers', { kinds: kinds.map((kind) => ({ code: 'host.leftoverKind', params: { kind } })) }));
  }
  return verdict('CLEAN', message('host.clean'));
}

/** Whether an install may start: a clean host, or a cleanable one whose cleanup ran. */
export function verdictAllowsInstall(verdict: Pick<HostVerdict, 'verdict' | 'cleanedAt'> | null): boolean {
  return verdict === null || verdict.verdict === 'CLEAN' || (verdict.verdict === 'CLEANABLE' && Boolean(verdict.cleanedAt));
}

/** Files a kubelet kubeconfig lives in; any other file under /etc/kubernetes counts as KUBERNETES_FILES. */
export const KUBECONFIG_PATHS = ['/etc/kubernetes/kubelet.conf', '/etc/kubernetes/bootstrap-kubelet.conf', '/etc/kubernetes/kubeconfig', '/var/lib/kubelet/kubeconfig'] as const;

/** Where cleanup may delete: nothing outside these folders, whatever a scan reported. */
export const CLEANABLE_PREFIXES = ['/etc/kubernetes/', '/var/lib/kubelet/'] as const;

export interface HostScan {
  readonly machineId: string | null;
  readonly leftovers: readonly Leftover[];
}

/**
 * Reads the output of the host scan: sections introduced by `@@name` lines (machine-id,
 * kubelet-pki, kubeconfig, kubernetes-files, kubelet-active, kubelet-enabled, end).
 */
export function parseHostScan(output: string): HostScan {
  const sections = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of output.split('\n')) {
    const marker = /^@@([a-z-]+)$/.exec(line.trim());
    if (marker) {
      current = [];
      sections.set(marker[1], current);
    } else if (current && line.trim() !== '') {
      current.push(line.trim());
    }
  }
  const lines = (name: string) => sections.get(name) ?? [];
  const kubeconfigs = new Set(lines('kubeconfig'));
  const leftovers: Leftover[] = [
    ...lines('kubelet-pki').map((item) => ({ kind: 'KUBELET_CERTIFICATES' as const, item })),
    ...[...kubeconfigs].map((item) => ({ kind: 'KUBECONFIG' as const, item })),
    ...lines('kubernetes-files').filter((item) => !kubeconfigs.has(item)).map((item) => ({ kind: 'KUBERNETES_FILES' as const, item })),
  ];
  if (lines('kubelet-active')[0] === 'active') {
    leftovers.push({ kind: 'KUBELET_SERVICE', item: 'kubelet.service (running)' });
  }
  if (lines('kubelet-enabled')[0] === 'enabled') {
    leftovers.push({ kind: 'KUBELET_SERVICE', item: 'kubelet.service (enabled)' });
  }
  const machineId = lines('machine-id')[0] ?? null;
  return { machineId: machineId && /^[0-9a-f]{32}$/.test(machineId) ? machineId : null, leftovers };
}

/** The host paths cleanup deletes: files the scan listed, inside {@link CLEANABLE_PREFIXES} only. */
export function cleanupPaths(leftovers: readonly Leftover[]): string[] {
  return leftovers
    .filter((leftover) => leftover.kind === 'KUBELET_CERTIFICATES' || leftover.kind === 'KUBECONFIG' || leftover.kind === 'KUBERNETES_FILES')
    .map((leftover) => leftover.item)
    .filter((path) => CLEANABLE_PREFIXES.some((prefix) => path.startsWith(prefix)) && !path.split('/').includes('..'));
}
