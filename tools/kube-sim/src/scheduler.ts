import type { KubeSimClock } from './clock';
import { cloneJson, isJsonObject, type JsonObject } from './json-value';
import { kubeTime, type KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import type { ObjectStore, StoreEvent } from './store';
import { WorkQueue } from './work-queue';

const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

function list(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

function isReady(node: KubeObject): boolean {
  return list(node.status?.['conditions']).some((c) => c['type'] === 'Ready' && c['status'] === 'True');
}

/** Whether a toleration tolerates a taint (v1helper.TolerationsTolerateTaint). */
function tolerates(toleration: JsonObject, taint: JsonObject): boolean {
  if (toleration['effect'] && toleration['effect'] !== taint['effect']) {
    return false;
  }
  if (toleration['operator'] === 'Exists') {
    return !toleration['key'] || toleration['key'] === taint['key'];
  }
  return toleration['key'] === taint['key'] && (toleration['value'] ?? '') === (taint['value'] ?? '');
}

/** The taints the scheduler filters on: the node's, plus not-ready for a node that is not Ready (what TaintNodesByCondition adds). */
function schedulingTaints(node: KubeObject): JsonObject[] {
  const taints = list(node.spec?.['taints']).filter((t) => t['effect'] === 'NoSchedule' || t['effect'] === 'NoExecute');
  if (!isReady(node) && !taints.some((t) => t['key'] === NOT_READY_TAINT || t['key'] === 'node.kubernetes.io/unreachable')) {
    taints.push({ key: NOT_READY_TAINT, effect: 'NoSchedule' });
  }
  return taints;
}

/** Why a node cannot take a pod (the scheduler's filter reasons), or undefined when it can. */
function unfit(pod: KubeObject, node: KubeObject): string | undefined {
  const tolerations = list(pod.spec?.['tolerations']);
  if (node.spec?.['unschedulable'] === true && !tolerations.some((t) => tolerates(t, { key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' }))) {
    return 'node(s) were unschedulable';
  }
  // In the order of the default profile's filters: NodeUnschedulable, TaintToleration, NodeAffinity.
  const taint = schedulingTaints(node).find((t) => !tolerations.some((tol) => tolerates(tol, t)));
  if (taint) {
    return `node(s) had untolerated taint {${String(taint['key'])}: ${String(taint['value'] ?? '')}}`;
  }
  const selector = pod.spec?.['nodeSelector'];
  if (isJsonObject(selector) && Object.entries(selector).some(([key, value]) => node.metadata.labels?.[key] !== value)) {
    return "node(s) didn't match Pod's node affinity/selector";
  }
  return undefined;
}

/**
 * A scheduler for the default profile's filters that matter here: unschedulable (cordoned) nodes,
 * NoSchedule/NoExecute taints against tolerations (a node that is not Ready counts as tainted
 * not-ready), and `nodeSelector`. Pending pods of `default-scheduler` without `spec.nodeName` are
 * bound to the fitting node with the fewest pods, or get `PodScheduled=False` (Unschedulable) with
 * the real message shape, and are retried whenever nodes or pods change. Node affinity, resources
 * and topology spread are not considered.
 * @see https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/
 */
export class Scheduler {
  private readonly unsubscribe: () => void;
  private readonly queue: WorkQueue;
  private readonly pods: ResourceDefinition;
  private readonly nodes: ResourceDefinition;

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: KubeSimClock,
    delayMs: number,
    onError?: (error: unknown) => void,
  ) {
    const find = (resource: string): ResourceDefinition => {
      const def = store.definitions.find((d) => d.group === '' && d.resource === resource);
      if (!def) {
        throw new Error(`${resource} are not served`);
      }
      return def;
    };
    this.pods = find('pods');
    this.nodes = find('nodes');
    this.queue = new WorkQueue(() => this.schedulePending(), delayMs, onError);
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
    this.queue.add('pending');
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource === this.nodes || (event.resource === this.pods && (event.type === 'DELETED' || !event.object.spec?.['nodeName']))) {
      this.queue.add('pending');
    }
  }

  private schedulePending(): void {
    const pending = this.store.list(this.pods, { nodeName: '' }).filter((pod) => !pod.metadata.deletionTimestamp && (pod.spec?.['schedulerName'] ?? 'default-scheduler') === 'default-scheduler' && !['Succeeded', 'Failed'].includes(String(pod.status?.['phase'])));
    if (pending.length === 0) {
      return;
    }
    const nodes = this.store.list(this.nodes);
    const load = new Map(nodes.map((n) => [n.metadata.name ?? '', this.store.list(this.pods, { nodeName: n.metadata.name ?? '' }).length]));
    for (const pod of pending) {
      const reasons = new Map<string, number>();
      let best: string | undefined;
      for (const node of nodes) {
        const why = unfit(pod, node);
        if (why) {
          reasons.set(why, (reasons.get(why) ?? 0) + 1);
        } else if (best === undefined || (load.get(node.metadata.name ?? '') ?? 0) < (load.get(best) ?? 0)) {
          best = node.metadata.name ?? '';
        }
      }
      if (best !== undefined) {
        this.bind(pod, best);
        load.set(best, (load.get(best) ?? 0) + 1);
      } else {
        const summary = [...reasons].map(([why, count]) => `${count} ${why}`).sort();
        const message = `0/${nodes.length} nodes are available${summary.length > 0 ? `: ${summary.join(', ')}` : ''}. preemption: 0/${nodes.length} nodes are available: ${nodes.length} Preemption is not helpful for scheduling.`;
        this.markUnschedulable(pod, message);
      }
    }
  }

  private withCondition(pod: KubeObject, condition: JsonObject): KubeObject {
    const updated = cloneJson(pod);
    const conditions = list(updated.status?.['conditions']).filter((c) => c['type'] !== 'PodScheduled');
    updated.status = { ...updated.status, conditions: [...conditions, condition] };
    return updated;
  }

  /** What the pods/binding subresource does: spec.nodeName set, PodScheduled True. */
  private bind(pod: KubeObject, nodeName: string): void {
    const updated = this.withCondition(pod, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: kubeTime(this.clock.now()) });
    updated.spec = { ...updated.spec, nodeName };
    this.store.replace(this.pods, updated);
  }

  private markUnschedulable(pod: KubeObject, message: string): void {
    const current = list(pod.status?.['conditions']).find((c) => c['type'] === 'PodScheduled');
    if (current?.['status'] === 'False' && current['message'] === message) {
      return;
    }
    this.store.replace(this.pods, this.withCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: kubeTime(this.clock.now()) }));
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  get busy(): boolean {
    return this.queue.busy;
  }

  stop(): void {
    this.unsubscribe();
    this.queue.stop();
  }
}
