import type { V1Node } from '@kubernetes/client-node';
import { listAll, startInformer, type InformerOptions, type WatchEventType } from './informer';
import type { KubeClient } from './kube-client';
import { cpuMillicores, wholeUnits } from './quantity';

/** Label prefix kubectl reads roles from (`node-role.kubernetes.io/worker: ""`). */
export const NODE_ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
/** Taint keys that keep ordinary pods off control-plane nodes. */
export const CONTROL_PLANE_TAINT_KEYS = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'] as const;

/** A taint as the API describes it. */
export interface NodeTaint {
  key: string;
  value: string | null;
  effect: string;
}

/** What the product needs to know about a Node. */
export interface NodeSummary {
  name: string;
  uid: string;
  /** Sorted role names, from `node-role.kubernetes.io/<role>` and `kubernetes.io/role` labels (as `kubectl get nodes` shows them). */
  roles: string[];
  /** The Ready condition is True. */
  ready: boolean;
  /** The Ready condition's status; `Unknown` when the kubelet stopped reporting or there is no condition. */
  readyStatus: 'True' | 'False' | 'Unknown';
  /** When the Ready condition last changed status (ISO 8601); null without one. */
  readySince: string | null;
  /** Cordoned (`spec.unschedulable`). */
  unschedulable: boolean;
  /** `status.addresses` in the order the kubelet reported them (InternalIP, Hostname, ...). */
  addresses: Array<{ type: string; address: string }>;
  /** Taints with a control-plane key. */
  controlPlaneTaints: NodeTaint[];
  /** Every taint with effect NoSchedule or NoExecute (what keeps ordinary pods off). */
  schedulingTaints: NodeTaint[];
  kubeletVersion: string | null;
  /** `status.nodeInfo.bootID`: the boot the kubelet last reported from; null before it has. */
  bootId: string | null;
  /** `status.allocatable`, parsed; null when the kubelet has not reported it. */
  allocatable: { cpuMillicores: number | null; memoryBytes: number | null; pods: number | null };
  /** ISO 8601. */
  createdAt: string | null;
}

/** A change of a Node. MODIFIED is only reported when the summary changed (not for heartbeats). */
export interface NodeEvent {
  type: WatchEventType;
  node: NodeSummary;
}

/** A running Node watch. */
export interface NodeInventory {
  /** Resolves once the initial list has been reported as ADDED events. */
  readonly synced: Promise<void>;
  /** The current Nodes, by name. */
  nodes(): NodeSummary[];
  /** Cuts the informer's wait after a failure short. */
  retryNow(): void;
  stop(): Promise<void>;
}

/** An ISO time from a client-node Date (lists) or the raw string a watch delivers. */
export function isoTime(value: unknown): string | null {
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? null : value.toISOString();
  }
  if (typeof value === 'string' && value !== '') {
    const parsed = new Date(value);
    return Number.isNaN(parsed.getTime()) ? null : parsed.toISOString();
  }
  return null;
}

function rolesOf(labels: Record<string, string>): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(labels)) {
    if (key.startsWith(NODE_ROLE_LABEL_PREFIX) && key.length > NODE_ROLE_LABEL_PREFIX.length) {
      roles.add(key.slice(NODE_ROLE_LABEL_PREFIX.length));
    } else if ((key === 'kubernetes.io/role' || key === 'node-role.kubernetes.io') && value !== '') {
      roles.add(value);
    }
  }
  return [...roles].sort();
}

/**
 * Summarises a Node object (from a list or a watch).
 * @see https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/
 * @see https://github.com/kubernetes/kubectl/blob/master/pkg/describe/interface.go
 */
export function summarizeNode(node: V1Node): NodeSummary {
  const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready');
  const readyStatus = ready?.status === 'True' || ready?.status === 'False' ? ready.status : 'Unknown';
  const taints: NodeTaint[] = (node.spec?.taints ?? []).map((taint) => ({ key: taint.key, value: taint.value ?? null, effect: taint.effect }));
  const allocatable = node.status?.allocatable ?? {};
  return {
    name: node.metadata?.name ?? '',
    uid: node.metadata?.uid ?? '',
    roles: rolesOf(node.metadata?.labels ?? {}),
    ready: readyStatus === 'True',
    readyStatus,
    readySince: isoTime(ready?.lastTransitionTime),
    unschedulable: node.spec?.unschedulable === true,
    addresses: (node.status?.addresses ?? []).map((entry) => ({ type: entry.type, address: entry.address })),
    controlPlaneTaints: taints.filter((taint) => (CONTROL_PLANE_TAINT_KEYS as readonly string[]).includes(taint.key)),
    schedulingTaints: taints.filter((taint) => taint.effect === 'NoSchedule' || taint.effect === 'NoExecute'),
    kubeletVersion: node.status?.nodeInfo?.kubeletVersion || null,
    bootId: node.status?.nodeInfo?.bootID || null,
    allocatable: { cpuMillicores: cpuMillicores(allocatable['cpu']), memoryBytes: wholeUnits(allocatable['memory']), pods: wholeUnits(allocatable['pods']) },
    createdAt: isoTime(node.metadata?.creationTimestamp),
  };
}

/**
 * Lists every Node (paged).
 * @see https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/#list-list-or-watch-objects-of-kind-node
 */
export async function listNodes(client: KubeClient, signal?: AbortSignal): Promise<NodeSummary[]> {
  const { items } = await listAll(client, 'list nodes', (page, options) => client.core.listNode(page, options), signal);
  return items.map(summarizeNode);
}

/**
 * Watches Nodes informer-style (list, watch from the list's resourceVersion, list again on 410
 * Gone, reconnect with backoff) and reports changes of their summaries.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 */
export function watchNodes(client: KubeClient, onEvent: (event: NodeEvent) => void, options: InformerOptions = {}): NodeInventory {
  const summaries = new Map<string, { node: NodeSummary; json: string }>();
  const informer = startInformer<V1Node>(
    client,
    { path: '/api/v1/nodes', description: 'list nodes', list: (page, callOptions) => client.core.listNode(page, callOptions) },
    ({ type, object }) => {
      const node = summarizeNode(object);
      if (type === 'DELETED') {
        summaries.delete(node.name);
        onEvent({ type, node });
        return;
      }
      const json = JSON.stringify(node);
      const before = summaries.get(node.name);
      summaries.set(node.name, { node, json });
      if (!before) {
        onEvent({ type: 'ADDED', node });
      } else if (before.json !== json) {
        onEvent({ type: 'MODIFIED', node });
      }
    },
    options,
  );
  return {
    synced: informer.synced,
    nodes: () => [...summaries.values()].map((entry) => entry.node).sort((a, b) => a.name.localeCompare(b.name)),
    retryNow: () => informer.retryNow(),
    stop: () => informer.stop(),
  };
}
