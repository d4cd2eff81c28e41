import { createHash } from 'node:crypto';
import { ApiError } from './api-error';
import { cloneJson, isJsonObject, jsonEqual, type JsonObject } from './json-value';
import { controllerOf, kubeTime, type KubeObject, type OwnerReference } from './kube-object';
import type { ObjectApi } from './object-api';
import { isPodHealthy, scaledValue } from './pdb';
import type { ResourceDefinition } from './resource-definition';
import { labelSelectorFromObject } from './selectors';
import type { StoreEvent } from './store';
import type { UserInfo } from './user-info';
import { WorkQueue } from './work-queue';

const CONTROLLER: UserInfo = { username: 'system:kube-controller-manager', groups: ['system:masters', 'system:authenticated'] };
const TEMPLATE_HASH_LABEL = 'pod-template-hash';
const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Pods a ReplicaSet creates or deletes in one pass (the controller's burstReplicas). */
const BURST = 500;

function replicasOf(obj: KubeObject): number {
  const value = obj.spec?.['replicas'];
  return typeof value === 'number' ? value : 1;
}

function isActive(pod: KubeObject): boolean {
  const phase = pod.status?.['phase'];
  return !pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
}

function ownerRef(owner: KubeObject, kind: string): OwnerReference {
  return { apiVersion: 'apps/v1', kind, name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** Which pods go first when scaling down (controller.ActivePods ordering): unassigned, pending, not ready, newest. */
function deletionRank(pod: KubeObject): [number, number, number, number] {
  const phase = String(pod.status?.['phase'] ?? 'Pending');
  return [pod.spec?.['nodeName'] ? 1 : 0, phase === 'Pending' ? 0 : phase === 'Unknown' ? 1 : 2, isPodHealthy(pod) ? 1 : 0, -Date.parse(pod.metadata.creationTimestamp ?? '')];
}

function compareRanks(a: KubeObject, b: KubeObject): number {
  const [ra, rb] = [deletionRank(a), deletionRank(b)];
  for (let i = 0; i < ra.length; i++) {
    if (ra[i] !== rb[i]) {
      return ra[i] - rb[i];
    }
  }
  return 0;
}

/**
 * The ReplicaSet controller: keeps `spec.replicas` active pods from the template (creating them
 * `<name>-<random>` with a controller reference, adopting matching orphans and releasing owned pods
 * that stopped matching, deleting the pods that matter least when there are too many), and writes `status` (replicas, fullyLabeledReplicas,
 * readyReplicas, availableReplicas, observedGeneration). An evicted or deleted pod is replaced at
 * once; the scheduler then places the replacement.
 * @see https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/
 */
export class ReplicaSetController {
  private readonly unsubscribe: () => void;
  private readonly queue: WorkQueue;
  private readonly pods: ResourceDefinition;
  private readonly replicaSets: ResourceDefinition;

  constructor(private readonly api: ObjectApi, delayMs: number, onError?: (error: unknown) => void) {
    this.pods = api.resource('', 'v1', 'pods');
    this.replicaSets = api.resource('apps', 'v1', 'replicasets');
    this.queue = new WorkQueue((key) => this.sync(key), delayMs, onError);
    this.unsubscribe = api.store.subscribe((event) => this.onEvent(event));
    for (const rs of api.store.list(this.replicaSets)) {
      this.queue.add(`${rs.metadata.namespace ?? ''}/${rs.metadata.name ?? ''}`);
    }
  }

  private onEvent(event: StoreEvent): void {
    const ns = event.object.metadata.namespace ?? '';
    if (event.resource === this.replicaSets) {
      if (event.type !== 'DELETED') {
        this.queue.add(`${ns}/${event.object.metadata.name ?? ''}`);
      }
      return;
    }
    if (event.resource !== this.pods) {
      return;
    }
    for (const pod of [event.object, event.previous]) {
      const ref = pod ? controllerOf(pod) : undefined;
      if (ref?.kind === 'ReplicaSet') {
        this.queue.add(`${ns}/${ref.name}`);
      } else if (pod && !ref && pod.metadata.labels && event.type !== 'DELETED') {
        for (const rs of this.api.store.list(this.replicaSets, { namespace: ns })) {
          if (labelSelectorFromObject(rs.spec?.['selector']).matches(pod.metadata.labels)) {
            this.queue.add(`${ns}/${rs.metadata.name ?? ''}`);
          }
        }
      }
    }
  }

  private sync(key: string): void {
    const [namespace, name] = key.split('/');
    const rs = this.api.store.get(this.replicaSets, namespace, name);
    if (!rs || rs.metadata.deletionTimestamp) {
      return;
    }
    const selector = labelSelectorFromObject(rs.spec?.['selector']);
    const owned: KubeObject[] = [];
    for (const pod of this.api.store.list(this.pods, { namespace })) {
      const ref = controllerOf(pod);
      if (ref?.uid === rs.metadata.uid) {
        if (selector.matches(pod.metadata.labels)) {
          owned.push(pod);
        } else if (!pod.metadata.deletionTimestamp) {
          this.release(pod, rs);
        }
      } else if (!ref && !pod.metadata.deletionTimestamp && selector.matches(pod.metadata.labels)) {
        owned.push(this.adopt(pod, rs));
      }
    }
    let active = owned.filter(isActive);
    const diff = replicasOf(rs) - active.length;
    if (diff > 0) {
      for (let i = 0; i < Math.min(diff, BURST); i++) {
        active.push(this.createPod(rs));
      }
    } else if (diff < 0) {
      const doomed = [...active].sort(compareRanks).slice(0, Math.min(-diff, BURST));
      for (const pod of doomed) {
        this.deleteQuietly(pod);
      }
      active = active.filter((pod) => !doomed.includes(pod));
    }
    const templateLabels = (rs.spec?.['template'] as JsonObject | undefined)?.['metadata'];
    const wantedLabels = isJsonObject(templateLabels) && isJsonObject(templateLabels['labels']) ? (templateLabels['labels'] as Record<string, string>) : {};
    const ready = active.filter(isPodHealthy).length;
    const status: JsonObject = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((pod) => Object.entries(wantedLabels).every(([k, v]) => pod.metadata.labels?.[k] === v)).length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: rs.metadata.generation ?? 1,
    };
    for (const field of ['readyReplicas', 'availableReplicas', 'fullyLabeledReplicas']) {
      if (status[field] === 0) {
        delete status[field];
      }
    }
    if (!jsonEqual(rs.status ?? {}, status)) {
      const updated = cloneJson(rs);
      updated.status = status;
      this.api.store.replace(this.replicaSets, updated);
    }
  }

  /** A pod that no longer matches the selector is let go (ClaimPods releases it). */
  private release(pod: KubeObject, rs: KubeObject): void {
    const updated = cloneJson(pod);
    updated.metadata.ownerReferences = (updated.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== rs.metadata.uid);
    if (updated.metadata.ownerReferences.length === 0) {
      delete updated.metadata.ownerReferences;
    }
    this.api.store.replace(this.pods, updated);
  }

  private adopt(pod: KubeObject, rs: KubeObject): KubeObject {
    const updated = cloneJson(pod);
    updated.metadata.ownerReferences = [...(updated.metadata.ownerReferences ?? []), ownerRef(rs, 'ReplicaSet')];
    return this.api.store.replace(this.pods, updated);
  }

  private createPod(rs: KubeObject): KubeObject {
    const template = isJsonObject(rs.spec?.['template']) ? (rs.spec['template'] as JsonObject) : {};
    const meta = isJsonObject(template['metadata']) ? template['metadata'] : {};
    const body: KubeObject = {
      metadata: {
        generateName: `${rs.metadata.name ?? ''}-`,
        labels: isJsonObject(meta['labels']) ? (cloneJson(meta['labels']) as Record<string, string>) : undefined,
        annotations: isJsonObject(meta['annotations']) ? (cloneJson(meta['annotations']) as Record<string, string>) : undefined,
        ownerReferences: [ownerRef(rs, 'ReplicaSet')],
      },
      spec: isJsonObject(template['spec']) ? cloneJson(template['spec']) : {},
    };
    return this.api.create(this.pods, rs.metadata.namespace, body, { user: CONTROLLER });
  }

  private deleteQuietly(pod: KubeObject): void {
    try {
      this.api.delete(this.pods, pod.metadata.namespace, pod.metadata.name ?? '', { user: CONTROLLER });
    } catch (error) {
      if (!(error instanceof ApiError && error.status.code === 404)) {
        throw error;
      }
    }
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

/** The pod-template-hash of a template: a short hash in the controller's safe alphabet. */
function templateHash(template: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(template ?? {})).digest();
  let out = '';
  for (let i = 0; i < 10; i++) {
    out += SAFE_ALPHABET[digest[i] % SAFE_ALPHABET.length];
  }
  return out;
}

/**
 * The Deployment controller, simplified: one ReplicaSet per pod template (`<name>-<pod-template-hash>`,
 * the hash label added to its selector and template, a revision annotation), the current one scaled
 * to `spec.replicas` and older ones to 0 at once (no surge or unavailability pacing), and `status`
 * summed from its ReplicaSets with an Available condition.
 * @see https://kubernetes.io/docs/concepts/workloads/controllers/deployment/
 */
export class DeploymentController {
  private readonly unsubscribe: () => void;
  private readonly queue: WorkQueue;
  private readonly deployments: ResourceDefinition;
  private readonly replicaSets: ResourceDefinition;

  constructor(private readonly api: ObjectApi, delayMs: number, onError?: (error: unknown) => void) {
    this.deployments = api.resource('apps', 'v1', 'deployments');
    this.replicaSets = api.resource('apps', 'v1', 'replicasets');
    this.queue = new WorkQueue((key) => this.sync(key), delayMs, onError);
    this.unsubscribe = api.store.subscribe((event) => this.onEvent(event));
    for (const deployment of api.store.list(this.deployments)) {
      this.queue.add(`${deployment.metadata.namespace ?? ''}/${deployment.metadata.name ?? ''}`);
    }
  }

  private onEvent(event: StoreEvent): void {
    const ns = event.object.metadata.namespace ?? '';
    if (event.resource === this.deployments && event.type !== 'DELETED') {
      this.queue.add(`${ns}/${event.object.metadata.name ?? ''}`);
    } else if (event.resource === this.replicaSets) {
      const ref = controllerOf(event.object);
      if (ref?.kind === 'Deployment') {
        this.queue.add(`${ns}/${ref.name}`);
      }
    }
  }

  private sync(key: string): void {
    const [namespace, name] = key.split('/');
    const deployment = this.api.store.get(this.deployments, namespace, name);
    if (!deployment || deployment.metadata.deletionTimestamp) {
      return;
    }
    const desired = replicasOf(deployment);
    const template = deployment.spec?.['template'];
    const hash = templateHash(template);
    const owned = this.api.store.list(this.replicaSets, { namespace }).filter((rs) => controllerOf(rs)?.uid === deployment.metadata.uid);
    let current = owned.find((rs) => rs.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash);
    if (!current) {
      current = this.createReplicaSet(deployment, hash, owned);
    } else if (replicasOf(current) !== desired) {
      current = this.scale(current, desired);
    }
    for (const old of owned) {
      if (old !== current && replicasOf(old) > 0) {
        this.scale(old, 0);
      }
    }
    const all = this.api.store.list(this.replicaSets, { namespace }).filter((rs) => controllerOf(rs)?.uid === deployment.metadata.uid);
    const sum = (field: string): number => all.reduce((total, rs) => total + Number(rs.status?.[field] ?? 0), 0);
    const latest = this.api.store.get(this.replicaSets, namespace, current.metadata.name ?? '');
    const available = sum('availableReplicas');
    const strategy = deployment.spec?.['strategy'];
    const rolling = isJsonObject(strategy) && isJsonObject(strategy['rollingUpdate']) ? strategy['rollingUpdate'] : {};
    const maxUnavailable = rolling['maxUnavailable'];
    const tolerated = typeof maxUnavailable === 'number' || typeof maxUnavailable === 'string' ? Math.floor(Number(scaledValue(maxUnavailable, desired))) : Math.floor(desired / 4);
    const isAvailable = available >= desired - tolerated;
    const previous = Array.isArray(deployment.status?.['conditions']) ? deployment.status['conditions'].filter(isJsonObject) : [];
    const old = previous.find((c) => c['type'] === 'Available');
    const availableStatus = isAvailable ? 'True' : 'False';
    const now = kubeTime(this.api.clock.now());
    const status: JsonObject = {
      observedGeneration: deployment.metadata.generation ?? 1,
      replicas: sum('replicas'),
      updatedReplicas: Number(latest?.status?.['replicas'] ?? 0),
      readyReplicas: sum('readyReplicas'),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, desired - available),
      conditions: [
        {
          type: 'Available',
          status: availableStatus,
          reason: isAvailable ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          message: isAvailable ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
          lastUpdateTime: old?.['status'] === availableStatus && typeof old['lastUpdateTime'] === 'string' ? old['lastUpdateTime'] : now,
          lastTransitionTime: old?.['status'] === availableStatus && typeof old['lastTransitionTime'] === 'string' ? old['lastTransitionTime'] : now,
        },
      ],
    };
    for (const field of ['readyReplicas', 'availableReplicas', 'unavailableReplicas', 'updatedReplicas', 'replicas']) {
      if (status[field] === 0) {
        delete status[field];
      }
    }
    if (!jsonEqual(deployment.status ?? {}, status)) {
      const updated = cloneJson(deployment);
      updated.status = status;
      this.api.store.replace(this.deployments, updated);
    }
  }

  private createReplicaSet(deployment: KubeObject, hash: string, owned: readonly KubeObject[]): KubeObject {
    const template = cloneJson(isJsonObject(deployment.spec?.['template']) ? (deployment.spec['template'] as JsonObject) : {});
    const meta = isJsonObject(template['metadata']) ? template['metadata'] : {};
    const labels = { ...(isJsonObject(meta['labels']) ? (meta['labels'] as Record<string, string>) : {}), [TEMPLATE_HASH_LABEL]: hash };
    template['metadata'] = { ...meta, labels };
    const selector = cloneJson(isJsonObject(deployment.spec?.['selector']) ? (deployment.spec['selector'] as JsonObject) : {});
    selector['matchLabels'] = { ...(isJsonObject(selector['matchLabels']) ? selector['matchLabels'] : {}), [TEMPLATE_HASH_LABEL]: hash };
    const revision = Math.max(0, ...owned.map((rs) => Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? 0))) + 1;
    return this.api.create(
      this.replicaSets,
      deployment.metadata.namespace,
      {
        metadata: { name: `${deployment.metadata.name ?? ''}-${hash}`, labels, annotations: { [REVISION_ANNOTATION]: String(revision) }, ownerReferences: [ownerRef(deployment, 'Deployment')] },
        spec: { replicas: replicasOf(deployment), selector, template },
      },
      { user: CONTROLLER },
    );
  }

  private scale(rs: KubeObject, replicas: number): KubeObject {
    return this.api.patch(this.replicaSets, rs.metadata.namespace, rs.metadata.name ?? '', 'application/merge-patch+json', { spec: { replicas } }, { user: CONTROLLER });
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

/**
 * A stand-in for the kubelets of nodes that have none (kube-sim runs no containers): a pod bound to
 * a Ready node after the simulator started becomes Running and Ready `startupMs` later, so
 * replacements count for budgets and Deployments. Off unless asked for.
 */
export class PodStarter {
  private readonly unsubscribe: () => void;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly pods: ResourceDefinition;
  private readonly nodes: ResourceDefinition;

  constructor(private readonly api: ObjectApi, private readonly startupMs: number) {
    this.pods = api.resource('', 'v1', 'pods');
    this.nodes = api.resource('', 'v1', 'nodes');
    this.unsubscribe = api.store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource !== this.pods || event.type === 'DELETED' || !event.object.spec?.['nodeName'] || event.previous?.spec?.['nodeName'] || event.object.status?.['phase'] !== 'Pending') {
      return;
    }
    const { namespace, name, uid } = event.object.metadata;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.start(namespace ?? '', name ?? '', uid ?? '');
    }, this.startupMs);
    timer.unref();
    this.timers.add(timer);
  }

  private start(namespace: string, name: string, uid: string): void {
    const pod = this.api.store.get(this.pods, namespace, name);
    const node = pod ? this.api.store.get(this.nodes, undefined, String(pod.spec?.['nodeName'] ?? '')) : undefined;
    if (!pod || pod.metadata.uid !== uid || pod.metadata.deletionTimestamp || pod.status?.['phase'] !== 'Pending' || !node) {
      return;
    }
    const ready = (Array.isArray(node.status?.['conditions']) ? node.status['conditions'] : []).some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True');
    if (!ready) {
      return;
    }
    const now = kubeTime(this.api.clock.now());
    const containers = (Array.isArray(pod.spec?.['containers']) ? pod.spec['containers'] : []).filter(isJsonObject);
    const updated = cloneJson(pod);
    const scheduled = (Array.isArray(pod.status?.['conditions']) ? pod.status['conditions'] : []).filter((c) => isJsonObject(c) && c['type'] === 'PodScheduled');
    updated.status = {
      ...updated.status,
      phase: 'Running',
      startTime: now,
      conditions: [
        ...['Initialized', 'Ready', 'ContainersReady'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now })),
        ...(scheduled.length > 0 ? scheduled : [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now }]),
      ],
      containerStatuses: containers.map((c) => ({ name: c['name'], ready: true, started: true, restartCount: 0, image: c['image'], imageID: '', state: { running: { startedAt: now } } })),
    };
    this.api.store.replace(this.pods, updated);
  }

  stop(): void {
    this.unsubscribe();
    this.timers.forEach(clearTimeout);
    this.timers.clear();
  }
}
