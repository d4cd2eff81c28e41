import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1DaemonSet,
  type V1DaemonSetStatus,
  type V1Deployment,
  type V1DeploymentStatus,
  type V1Node,
  type V1Pod,
  type V1PodCondition,
  type V1PodTemplateSpec,
  type V1ReplicaSet,
  type V1ReplicaSetStatus,
  type V1Taint,
  type V1Toleration,
} from '@kubernetes/client-node';

/**
 * The demo cluster's sample workloads (demo-workloads.yaml, seeded into
 * kube-sim) and the parts of Kubernetes that kube-sim leaves out for them:
 * the ReplicaSet and DaemonSet controllers, the scheduler and the kubelets'
 * pod status. It works through the API like those components do, and only
 * on objects labelled `app.kubernetes.io/part-of=ccos-demo`.
 *
 * kube-sim has no `pods/binding`, so a pod is created already bound to the
 * node the scheduler would pick (a Ready, schedulable node whose taints the
 * pod tolerates, the one with the fewest sample pods); while no node can
 * take it, it is not created, where a real ReplicaSet would show it Pending.
 * A pod on a Ready node turns Running at once and Ready `podReadySeconds`
 * later (its readiness probe). Evicted ReplicaSet pods are replaced, so a
 * budget blocks a drain only while no other node can run the replacement.
 */
export const SAMPLE_SELECTOR = 'app.kubernetes.io/part-of=ccos-demo';

/** The seed: namespaces, Deployments with their ReplicaSets, the budget, the DaemonSet. */
export const DEMO_WORKLOADS_SEED = readFileSync(new URL('./demo-workloads.yaml', import.meta.url), 'utf8');

/** The pod created once a node can run it, as `kubectl run debug-shell` would: no controller. */
const UNMANAGED_POD: V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'debug-shell', namespace: 'shop', labels: { run: 'debug-shell', 'app.kubernetes.io/part-of': 'ccos-demo' } },
  spec: {
    terminationGracePeriodSeconds: 5,
    containers: [{
      name: 'debug-shell',
      image: 'registry.ccos.local/tools/busybox:1.36',
      command: ['sleep', 'infinity'],
      resources: { requests: { cpu: '10m', memory: '16Mi' } },
    }],
  },
};

/** Tolerations the DaemonSet controller adds to its pods. */
const DAEMONSET_TOLERATIONS: V1Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

export interface DemoWorkloadsOptions {
  /** Admin kubeconfig of the demo's kube-sim. */
  readonly kubeconfig: string;
  /** Seconds between a pod starting and its turning Ready. */
  readonly podReadySeconds: number;
  readonly log: (message: string) => void;
  /** How often to look at the cluster. */
  readonly intervalMs?: number;
}

/** A workload's status as its controller writes it. */
type StatusWrite =
  | { readonly kind: 'ReplicaSet'; readonly object: V1ReplicaSet; readonly status: V1ReplicaSetStatus }
  | { readonly kind: 'DaemonSet'; readonly object: V1DaemonSet; readonly status: V1DaemonSetStatus }
  | { readonly kind: 'Deployment'; readonly object: V1Deployment; readonly status: V1DeploymentStatus };

export interface DemoWorkloads {
  stop(): Promise<void>;
}

/** Starts playing the controllers, scheduler and kubelets for the sample workloads. */
export function startDemoWorkloads(options: DemoWorkloadsOptions): DemoWorkloads {
  const config = new KubeConfig();
  config.loadFromString(options.kubeconfig);
  const controllers = new SampleControllers(config.makeApiClient(CoreV1Api), config.makeApiClient(AppsV1Api), options);
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = running.then(() => (stopped ? undefined : controllers.reconcile()));
  };
  const timer = setInterval(tick, options.intervalMs ?? 1000);
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

class SampleControllers {
  private unmanagedCreated = false;
  private readonly said = new Map<string, string>();

  constructor(
    private readonly core: CoreV1Api,
    private readonly apps: AppsV1Api,
    private readonly options: DemoWorkloadsOptions,
  ) {}

  async reconcile(): Promise<void> {
    try {
      const nodes = (await this.core.listNode()).items;
      const pods = (await this.core.listPodForAllNamespaces({ labelSelector: SAMPLE_SELECTOR })).items;
      await this.runPods(nodes, pods);
      for (const set of (await this.apps.listDaemonSetForAllNamespaces({ labelSelector: SAMPLE_SELECTOR })).items) {
        await this.reconcileDaemonSet(set, nodes, pods);
      }
      const replicaSets = (await this.apps.listReplicaSetForAllNamespaces({ labelSelector: SAMPLE_SELECTOR })).items;
      for (const set of replicaSets) {
        await this.reconcileReplicaSet(set, nodes, pods);
      }
      await this.reconcileUnmanaged(nodes, pods);
      await this.reconcileDeployments(replicaSets, pods);
      this.sayOnce('error', '');
    } catch (error) {
      this.sayOnce('error', `cannot reach the cluster: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The kubelets' part: pods on Ready nodes run, and turn Ready after the readiness delay. */
  private async runPods(nodes: readonly V1Node[], pods: readonly V1Pod[]): Promise<void> {
    const now = Date.now();
    for (const pod of pods) {
      const node = nodes.find((candidate) => candidate.metadata?.name === pod.spec?.nodeName);
      if (node === undefined || !nodeReady(node) || pod.metadata?.deletionTimestamp !== undefined) {
        continue;
      }
      const phase = pod.status?.phase;
      const started = pod.status?.startTime === undefined ? null : new Date(pod.status.startTime).getTime();
      const ready = started !== null && now - started >= this.options.podReadySeconds * 1000;
      if (phase === 'Pending' || (phase === 'Running' && ready && !podReady(pod))) {
        await this.writePodStatus(pod, node, ready && phase === 'Running');
      }
    }
  }

  private async reconcileDaemonSet(set: V1DaemonSet, nodes: readonly V1Node[], pods: readonly V1Pod[]): Promise<void> {
    const owned = active(ownedBy(pods, set.metadata?.uid));
    const template = set.spec?.template ?? {};
    const tolerations = [...(template.spec?.tolerations ?? []), ...DAEMONSET_TOLERATIONS];
    const eligible = nodes.filter((node) => node.metadata?.deletionTimestamp === undefined && toleratesAll(tolerations, node.spec?.taints ?? []));
    for (const node of eligible) {
      if (!owned.some((pod) => pod.spec?.nodeName === node.metadata?.name)) {
        await this.createPod(set, 'DaemonSet', template, node, tolerations);
      }
    }
    const scheduled = owned.filter((pod) => eligible.some((node) => node.metadata?.name === pod.spec?.nodeName));
    await this.writeStatus({ kind: 'DaemonSet', object: set, status: {
      currentNumberScheduled: scheduled.length,
      desiredNumberScheduled: eligible.length,
      numberMisscheduled: owned.length - scheduled.length,
      numberReady: scheduled.filter(podReady).length,
      numberAvailable: scheduled.filter(podReady).length,
      updatedNumberScheduled: scheduled.length,
      observedGeneration: set.metadata?.generation ?? 1,
    } });
  }

  private async reconcileReplicaSet(set: V1ReplicaSet, nodes: readonly V1Node[], pods: V1Pod[]): Promise<void> {
    const name = `${set.metadata?.namespace ?? ''}/${set.metadata?.name ?? ''}`;
    const owned = active(ownedBy(pods, set.metadata?.uid));
    const wanted = set.spec?.replicas ?? 1;
    const template = set.spec?.template ?? {};
    for (let missing = wanted - owned.length; missing > 0; missing -= 1) {
      const node = this.schedule(template.spec?.tolerations ?? [], nodes, pods);
      if (node === null) {
        this.sayOnce(`place ${name}`, `${name} wants ${wanted} pod${wanted === 1 ? '' : 's'} and has ${wanted - missing}: no Ready, schedulable node can take another`);
        break;
      }
      this.sayOnce(`place ${name}`, '');
      const pod = await this.createPod(set, 'ReplicaSet', template, node, template.spec?.tolerations ?? []);
      owned.push(pod);
      pods.push(pod);
    }
    for (const extra of [...owned].sort(byNewest).slice(0, Math.max(0, owned.length - wanted))) {
      await this.core.deleteNamespacedPod({ name: extra.metadata?.name ?? '', namespace: extra.metadata?.namespace ?? '' });
    }
    await this.writeStatus({ kind: 'ReplicaSet', object: set, status: {
      replicas: owned.length,
      fullyLabeledReplicas: owned.length,
      readyReplicas: owned.filter(podReady).length,
      availableReplicas: owned.filter(podReady).length,
      observedGeneration: set.metadata?.generation ?? 1,
    } });
  }

  private async reconcileUnmanaged(nodes: readonly V1Node[], pods: V1Pod[]): Promise<void> {
    if (this.unmanagedCreated) {
      return;
    }
    if (pods.some((pod) => pod.metadata?.name === UNMANAGED_POD.metadata?.name && pod.metadata?.namespace === UNMANAGED_POD.metadata?.namespace)) {
      this.unmanagedCreated = true;
      return;
    }
    const node = this.schedule([], nodes, pods);
    if (node === null) {
      return;
    }
    const pod = await this.core.createNamespacedPod({
      namespace: UNMANAGED_POD.metadata?.namespace ?? '',
      body: { ...UNMANAGED_POD, spec: { ...UNMANAGED_POD.spec, containers: UNMANAGED_POD.spec?.containers ?? [], nodeName: node.metadata?.name ?? '' } },
    });
    this.unmanagedCreated = true;
    pods.push(pod);
    this.options.log(`placed shop/${pod.metadata?.name ?? ''} (no controller: nothing recreates it) on ${node.metadata?.name ?? ''}`);
  }

  /** Deployment status from its ReplicaSets' pods (the sample Deployments never roll out). */
  private async reconcileDeployments(sets: readonly V1ReplicaSet[], pods: readonly V1Pod[]): Promise<void> {
    for (const deployment of (await this.apps.listDeploymentForAllNamespaces({ labelSelector: SAMPLE_SELECTOR })).items) {
      const mine = sets.filter((set) => set.metadata?.ownerReferences?.some((ref) => ref.uid === deployment.metadata?.uid));
      const owned = active(mine.flatMap((set) => ownedBy(pods, set.metadata?.uid)));
      const ready = owned.filter(podReady).length;
      const wanted = deployment.spec?.replicas ?? 1;
      await this.writeStatus({ kind: 'Deployment', object: deployment, status: {
        replicas: owned.length,
        updatedReplicas: owned.length,
        readyReplicas: ready,
        availableReplicas: ready,
        ...(wanted - ready > 0 ? { unavailableReplicas: wanted - ready } : {}),
        observedGeneration: deployment.metadata?.generation ?? 1,
      } });
    }
  }

  /** The scheduler's pick: Ready and schedulable, taints tolerated, fewest sample pods. */
  private schedule(tolerations: readonly V1Toleration[], nodes: readonly V1Node[], pods: readonly V1Pod[]): V1Node | null {
    const load = (node: V1Node) => active(pods).filter((pod) => pod.spec?.nodeName === node.metadata?.name).length;
    const feasible = nodes.filter((node) => nodeReady(node) && node.spec?.unschedulable !== true
      && node.metadata?.deletionTimestamp === undefined && toleratesAll(tolerations, node.spec?.taints ?? []));
    return [...feasible].sort((a, b) => load(a) - load(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))[0] ?? null;
  }

  private async createPod(owner: V1ReplicaSet | V1DaemonSet, kind: 'ReplicaSet' | 'DaemonSet', template: V1PodTemplateSpec, node: V1Node, tolerations: V1Toleration[]): Promise<V1Pod> {
    const namespace = owner.metadata?.namespace ?? 'default';
    const ownerName = owner.metadata?.name ?? '';
    const pod = await this.core.createNamespacedPod({
      namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${ownerName}-${podSuffix()}`,
          namespace,
          labels: template.metadata?.labels ?? {},
          ownerReferences: [{ apiVersion: 'apps/v1', kind, name: ownerName, uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
        },
        spec: { ...template.spec, containers: template.spec?.containers ?? [], nodeName: node.metadata?.name ?? '', tolerations },
      },
    });
    this.options.log(`placed ${namespace}/${pod.metadata?.name ?? ''} (${kind} ${ownerName}) on ${node.metadata?.name ?? ''}`);
    return pod;
  }

  private async writePodStatus(pod: V1Pod, node: V1Node, ready: boolean): Promise<void> {
    const now = new Date();
    const startedAt = pod.status?.startTime ?? now;
    const condition = (type: string, status: boolean): V1PodCondition => ({ type, status: status ? 'True' : 'False', lastTransitionTime: now });
    const body: V1Pod = {
      ...pod,
      status: {
        ...pod.status,
        phase: 'Running',
        hostIP: node.status?.addresses?.find((address) => address.type === 'InternalIP')?.address,
        podIP: pod.status?.podIP ?? `10.128.${randomInt(256)}.${randomInt(1, 255)}`,
        startTime: new Date(startedAt),
        conditions: [
          condition('PodReadyToStartContainers', true),
          condition('Initialized', true),
          condition('Ready', ready),
          condition('ContainersReady', ready),
          condition('PodScheduled', true),
        ],
        containerStatuses: (pod.spec?.containers ?? []).map((container) => ({
          name: container.name,
          image: container.image ?? '',
          imageID: '',
          ready,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: new Date(startedAt) } },
        })),
      },
    };
    try {
      await this.core.replaceNamespacedPodStatus({ name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', body });
      if (ready) {
        this.options.log(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''} is Ready on ${node.metadata?.name ?? ''}`);
      }
    } catch {
      // Changed meanwhile (e.g. being evicted): the next round sees the new state.
    }
  }

  private async writeStatus(write: StatusWrite): Promise<void> {
    const current = (write.object.status ?? {}) as Record<string, unknown>;
    const next = write.status as Record<string, unknown>;
    const keys = new Set([...Object.keys(current), ...Object.keys(next)].filter((key) => key !== 'conditions'));
    if ([...keys].every((key) => current[key] === next[key])) {
      return;
    }
    const target = { name: write.object.metadata?.name ?? '', namespace: write.object.metadata?.namespace ?? '' };
    try {
      if (write.kind === 'ReplicaSet') {
        await this.apps.replaceNamespacedReplicaSetStatus({ ...target, body: { ...write.object, status: write.status } });
      } else if (write.kind === 'DaemonSet') {
        await this.apps.replaceNamespacedDaemonSetStatus({ ...target, body: { ...write.object, status: write.status } });
      } else {
        await this.apps.replaceNamespacedDeploymentStatus({ ...target, body: { ...write.object, status: write.status } });
      }
    } catch {
      // A newer version exists: the next round writes from it.
    }
  }

  /** Logs a message when it differs from the last one under `key` ('' = nothing to say). */
  private sayOnce(key: string, message: string): void {
    if ((this.said.get(key) ?? '') !== message) {
      this.said.set(key, message);
      if (message !== '') {
        this.options.log(message);
      }
    }
  }
}

function nodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false;
}

function podReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false;
}

/** Pods a controller counts: not being deleted, not finished. */
function active(pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((pod) => pod.metadata?.deletionTimestamp === undefined && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed');
}

function ownedBy(pods: readonly V1Pod[], uid: string | undefined): V1Pod[] {
  return uid === undefined ? [] : pods.filter((pod) => pod.metadata?.ownerReferences?.some((ref) => ref.controller === true && ref.uid === uid));
}

function byNewest(a: V1Pod, b: V1Pod): number {
  return new Date(b.metadata?.creationTimestamp ?? 0).getTime() - new Date(a.metadata?.creationTimestamp ?? 0).getTime();
}

/** Whether the pod tolerates every NoSchedule/NoExecute taint (the scheduler's TaintToleration filter). */
function toleratesAll(tolerations: readonly V1Toleration[], taints: readonly V1Taint[]): boolean {
  return taints.filter((taint) => taint.effect !== 'PreferNoSchedule').every((taint) => tolerations.some((toleration) => {
    if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) {
      return false;
    }
    if (toleration.operator === 'Exists') {
      return toleration.key === undefined || toleration.key === '' || toleration.key === taint.key;
    }
    return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
  }));
}

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A random pod name suffix, from the alphabet Kubernetes uses for generated names. */
function podSuffix(): string {
  return Array.from({ length: 5 }, () => SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)]).join('');
}
