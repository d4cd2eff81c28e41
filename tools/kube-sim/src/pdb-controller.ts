import type { KubeSimClock } from './clock';
import { cloneJson } from './json-value';
import { controllerOf, type KubeObject } from './kube-object';
import { computePdbStatus, DISRUPTED_POD_TIMEOUT_MS, pdbStatusChanged, type ControllerScale } from './pdb';
import type { ResourceDefinition } from './resource-definition';
import type { ObjectStore, StoreEvent } from './store';
import { WorkQueue } from './work-queue';

const WATCHED = new Set(['v1/pods', 'policy/v1/poddisruptionbudgets', 'apps/v1/replicasets', 'apps/v1/deployments', 'apps/v1/statefulsets']);

function find(store: ObjectStore, group: string, resource: string): ResourceDefinition {
  const def = store.definitions.find((d) => d.group === group && d.resource === resource);
  if (!def) {
    throw new Error(`${group}/${resource} is not served`);
  }
  return def;
}

function replicas(obj: KubeObject): number {
  const value = obj.spec?.['replicas'];
  return typeof value === 'number' ? value : 1;
}

/**
 * The disruption controller: keeps every PodDisruptionBudget's status in step with the pods and
 * controllers of its namespace, through a work queue shortly after each change (`delayMs`; all
 * budgets at start), so a budget whose spec just changed has an old `observedGeneration` until then
 * and evictions meanwhile get the real "still being processed" 429.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/disruption/disruption.go
 */
export class PdbController {
  private readonly unsubscribe: () => void;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly pods: ResourceDefinition;
  private readonly pdbs: ResourceDefinition;
  private readonly replicaSets: ResourceDefinition;
  private readonly deployments: ResourceDefinition;
  private readonly statefulSets: ResourceDefinition;

  private readonly queue: WorkQueue;

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: KubeSimClock,
    delayMs = 0,
    onError?: (error: unknown) => void,
  ) {
    this.queue = new WorkQueue((namespace) => this.syncNamespace(namespace), delayMs, onError);
    this.pods = find(store, '', 'pods');
    this.pdbs = find(store, 'policy', 'poddisruptionbudgets');
    this.replicaSets = find(store, 'apps', 'replicasets');
    this.deployments = find(store, 'apps', 'deployments');
    this.statefulSets = find(store, 'apps', 'statefulsets');
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
  }

  /** Brings every budget up to date now (at start, so seeded budgets have their status at once). */
  syncAll(): void {
    for (const namespace of new Set(this.store.list(this.pdbs).map((pdb) => pdb.metadata.namespace ?? ''))) {
      this.syncNamespace(namespace);
    }
  }

  /** Resolves once no change waits to be processed. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  get busy(): boolean {
    return this.queue.busy;
  }

  private onEvent(event: StoreEvent): void {
    const id = `${event.resource.group ? `${event.resource.group}/` : ''}${event.resource.version}/${event.resource.resource}`;
    if (!WATCHED.has(id)) {
      return;
    }
    if (event.resource === this.pdbs && event.type === 'MODIFIED' && event.previous && event.previous.metadata.generation === event.object.metadata.generation) {
      // Our own status writes (and eviction's decrement) must not trigger another pass.
      if (JSON.stringify(event.previous.spec) === JSON.stringify(event.object.spec)) {
        return;
      }
    }
    this.queue.add(event.object.metadata.namespace ?? '');
  }

  private scaleOf: ControllerScale = (pod) => {
    const ref = controllerOf(pod);
    const ns = pod.metadata.namespace;
    if (!ref) {
      return undefined;
    }
    if (ref.kind === 'ReplicaSet') {
      const rs = this.store.get(this.replicaSets, ns, ref.name);
      if (!rs || rs.metadata.uid !== ref.uid) {
        return undefined;
      }
      const owner = controllerOf(rs);
      if (owner?.kind === 'Deployment') {
        const deployment = this.store.get(this.deployments, ns, owner.name);
        return deployment && deployment.metadata.uid === owner.uid ? { uid: owner.uid, replicas: replicas(deployment) } : undefined;
      }
      return { uid: ref.uid, replicas: replicas(rs) };
    }
    if (ref.kind === 'StatefulSet') {
      const sts = this.store.get(this.statefulSets, ns, ref.name);
      return sts && sts.metadata.uid === ref.uid ? { uid: ref.uid, replicas: replicas(sts) } : undefined;
    }
    return undefined;
  };

  /** Recomputes the status of every budget in a namespace. */
  syncNamespace(namespace: string): void {
    const budgets = this.store.list(this.pdbs, { namespace });
    if (budgets.length === 0) {
      return;
    }
    const pods = this.store.list(this.pods, { namespace });
    const now = new Date(this.clock.now());
    for (const pdb of budgets) {
      const status = computePdbStatus(pdb, pods, this.scaleOf, now);
      if (pdbStatusChanged(pdb.status, status)) {
        const updated = cloneJson(pdb);
        updated.status = status;
        this.store.replace(this.pdbs, updated);
      }
      this.scheduleExpiry(namespace, status['disruptedPods']);
    }
  }

  /** Evicted pods that never went away stop counting as disrupted after two minutes. */
  private scheduleExpiry(namespace: string, disrupted: unknown): void {
    if (typeof disrupted !== 'object' || disrupted === null || this.timers.has(namespace)) {
      return;
    }
    const times = Object.values(disrupted as Record<string, string>).map((t) => Date.parse(t) + DISRUPTED_POD_TIMEOUT_MS);
    const delay = Math.max(0, Math.min(...times) - this.clock.now()) + 50;
    const timer = setTimeout(() => {
      this.timers.delete(namespace);
      this.syncNamespace(namespace);
    }, delay);
    timer.unref();
    this.timers.set(namespace, timer);
  }

  stop(): void {
    this.unsubscribe();
    this.queue.stop();
    for (const timer of this.timers.values()) {
      clearTimeout(timer);
    }
    this.timers.clear();
  }
}
