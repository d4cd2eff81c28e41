import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { bare, type CodedText, type Message, message as text } from '@ccos/shared/messages';
import { classifyPods, isFinished, listPodsOnNode, podRef, type DrainOptions, type DrainPlan } from './drain-plan';
import type { KubeClient } from './kube-client';
import { listNodes, type NodeSummary } from './node-inventory';
import { cpuMillicores, wholeUnits } from './quantity';

/** CPU and memory a pod asks the scheduler for. */
export interface PodRequests {
  cpuMillicores: number;
  memoryBytes: number;
}

/** Room on a node, or an amount of demand. */
export interface Resources extends PodRequests {
  pods: number;
}

/** Why the pods of a node would or would not fit elsewhere. */
export interface CapacityDetail {
  node: string;
  /** One sentence for the removal preview. */
  message: string;
  /** `message` by its code in the message catalogue. */
  coded: CodedText;
  /** Sum over the pods a drain would evict (finished pods ask for nothing). */
  required: Resources;
  /** Sum of free room over the candidate nodes. */
  available: Resources;
  /** Schedulable Ready nodes other than this one, with their free room. */
  candidates: Array<{ name: string; free: Resources }>;
  /** Other nodes that cannot take pods, and why. */
  excluded: Array<{ name: string; reason: string }>;
  /** `namespace/name` of pods that fit on no candidate when packed largest first. */
  unplaceable: string[];
  /** Evicted pods without a controller: nobody recreates them, yet they are counted. */
  unmanaged: string[];
}

/** What {@link capacityCheck} need not read because the caller has it (a preview plans once and reads a watch cache). */
export interface CapacityInputs {
  /** The node's pods and their plan. */
  readonly planned?: { readonly onNode: V1Pod[]; readonly plan: DrainPlan };
  /** Every pod of a node, e.g. from a watch cache; by default a list per node. */
  readonly podsOnNode?: (nodeName: string) => V1Pod[] | Promise<V1Pod[]>;
  /** The cluster's Nodes; by default listed. */
  readonly nodes?: readonly NodeSummary[];
}

/** Answer of {@link capacityCheck}. */
export interface CapacityCheck {
  fits: boolean;
  detail: CapacityDetail;
}

function containerRequests(container: V1Container): PodRequests {
  const requests = container.resources?.requests ?? {};
  // The API server defaults missing requests to the limits; done here too for objects that skipped it.
  const limits = container.resources?.limits ?? {};
  return {
    cpuMillicores: cpuMillicores(requests['cpu'] ?? limits['cpu']) ?? 0,
    memoryBytes: wholeUnits(requests['memory'] ?? limits['memory']) ?? 0,
  };
}

/**
 * The requests the scheduler accounts for a pod: the larger of the sum over its containers (plus
 * sidecar init containers) and the largest regular init container (plus the sidecars started
 * before it), plus the pod overhead.
 * @see https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/api/v1/resource/helpers.go
 */
export function podRequests(pod: V1Pod): PodRequests {
  const total: PodRequests = { cpuMillicores: 0, memoryBytes: 0 };
  for (const container of pod.spec?.containers ?? []) {
    const r = containerRequests(container);
    total.cpuMillicores += r.cpuMillicores;
    total.memoryBytes += r.memoryBytes;
  }
  const sidecars: PodRequests = { cpuMillicores: 0, memoryBytes: 0 };
  const initPeak: PodRequests = { cpuMillicores: 0, memoryBytes: 0 };
  for (const container of pod.spec?.initContainers ?? []) {
    const r = containerRequests(container);
    if (container.restartPolicy === 'Always') {
      sidecars.cpuMillicores += r.cpuMillicores;
      sidecars.memoryBytes += r.memoryBytes;
      total.cpuMillicores += r.cpuMillicores;
      total.memoryBytes += r.memoryBytes;
    } else {
      initPeak.cpuMillicores = Math.max(initPeak.cpuMillicores, sidecars.cpuMillicores + r.cpuMillicores);
      initPeak.memoryBytes = Math.max(initPeak.memoryBytes, sidecars.memoryBytes + r.memoryBytes);
    }
  }
  const overhead = pod.spec?.overhead ?? {};
  return {
    cpuMillicores: Math.max(total.cpuMillicores, initPeak.cpuMillicores) + (cpuMillicores(overhead['cpu']) ?? 0),
    memoryBytes: Math.max(total.memoryBytes, initPeak.memoryBytes) + (wholeUnits(overhead['memory']) ?? 0),
  };
}

function exclusion(node: NodeSummary): string | null {
  if (!node.ready) {
    return `not Ready (${node.readyStatus})`;
  }
  if (node.unschedulable) {
    return 'cordoned';
  }
  if (node.schedulingTaints.length > 0) {
    return `tainted ${node.schedulingTaints.map((taint) => `${taint.key}:${taint.effect}`).join(', ')}`;
  }
  if (node.allocatable.cpuMillicores === null || node.allocatable.memoryBytes === null) {
    return 'no allocatable resources reported';
  }
  return null;
}

const mib = (bytes: number): string => (bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`);
const amount = (r: Resources): Message => bare(text('removal.capacity.amount', { cpu: r.cpuMillicores, memory: mib(r.memoryBytes), pods: r.pods }));

/**
 * Would the pods a drain evicts from `nodeName` fit on the remaining schedulable Ready nodes?
 * Sums the requests of the pods {@link planDrain} would evict (by default with force,
 * deleteEmptyDirData and ignoreDaemonSets: everything but DaemonSet and mirror pods) and compares
 * them with each other node's allocatable minus the requests of its unfinished pods, packing pods
 * largest first onto nodes that are Ready, not cordoned and free of NoSchedule/NoExecute taints.
 * Tolerations, affinity and topology spread are not considered: a preview, not a scheduler.
 * @see https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
 * @see https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/#node-allocatable
 */
export async function capacityCheck(
  client: KubeClient,
  nodeName: string,
  options: DrainOptions = {},
  known: CapacityInputs = {},
): Promise<CapacityCheck> {
  const signal = options.signal;
  const drainOptions: DrainOptions = { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, ...options };
  const podsOn = known.podsOnNode ?? ((name: string) => listPodsOnNode(client, name, signal));
  const [onNode, nodes] = await Promise.all([known.planned?.onNode ?? podsOn(nodeName), known.nodes ?? listNodes(client, signal)]);
  const plan = known.planned?.plan ?? (await classifyPods(client, nodeName, onNode, drainOptions));
  const evicted = new Set(plan.pods.filter((entry) => entry.action === 'evict').map((entry) => entry.pod));
  const moving = onNode.filter((pod) => evicted.has(podRef(pod)) && !isFinished(pod)).map((pod) => ({ pod: podRef(pod), requests: podRequests(pod) }));

  const excluded: CapacityDetail['excluded'] = [];
  const eligible: NodeSummary[] = [];
  for (const node of nodes) {
    if (node.name === nodeName) {
      continue;
    }
    const reason = exclusion(node);
    if (reason) {
      excluded.push({ name: node.name, reason });
    } else {
      eligible.push(node);
    }
  }
  const candidates = await Promise.all(
    eligible.map(async (node) => {
      const running = (await podsOn(node.name)).filter((pod) => !isFinished(pod));
      const used = running.map(podRequests).reduce((sum, r) => ({ cpuMillicores: sum.cpuMillicores + r.cpuMillicores, memoryBytes: sum.memoryBytes + r.memoryBytes }), {
        cpuMillicores: 0,
        memoryBytes: 0,
      });
      return {
        name: node.name,
        free: {
          cpuMillicores: Math.max(0, (node.allocatable.cpuMillicores ?? 0) - used.cpuMillicores),
          memoryBytes: Math.max(0, (node.allocatable.memoryBytes ?? 0) - used.memoryBytes),
          pods: Math.max(0, (node.allocatable.pods ?? 110) - running.length),
        },
      };
    }),
  );

  const required: Resources = moving.reduce((sum, m) => ({ cpuMillicores: sum.cpuMillicores + m.requests.cpuMillicores, memoryBytes: sum.memoryBytes + m.requests.memoryBytes, pods: sum.pods + 1 }), {
    cpuMillicores: 0,
    memoryBytes: 0,
    pods: 0,
  });
  const available: Resources = candidates.reduce(
    (sum, c) => ({ cpuMillicores: sum.cpuMillicores + c.free.cpuMillicores, memoryBytes: sum.memoryBytes + c.free.memoryBytes, pods: sum.pods + c.free.pods }),
    { cpuMillicores: 0, memoryBytes: 0, pods: 0 },
  );

  // First fit, largest first (by share of the total free room), on a copy of the free room.
  const room = candidates.map((c) => ({ ...c.free }));
  const weight = (r: PodRequests): number => r.cpuMillicores / Math.max(1, available.cpuMillicores) + r.memoryBytes / Math.max(1, available.memoryBytes);
  const unplaceable: string[] = [];
  for (const { pod, requests } of [...moving].sort((a, b) => weight(b.requests) - weight(a.requests))) {
    const slot = room.find((r) => r.pods >= 1 && r.cpuMillicores >= requests.cpuMillicores && r.memoryBytes >= requests.memoryBytes);
    if (!slot) {
      unplaceable.push(pod);
      continue;
    }
    slot.pods -= 1;
    slot.cpuMillicores -= requests.cpuMillicores;
    slot.memoryBytes -= requests.memoryBytes;
  }
  const unmanaged = plan.pods.filter((entry) => entry.action === 'evict' && entry.class === 'unmanaged').map((entry) => entry.pod);
  const fits = unplaceable.length === 0;
  const coded = fits
    ? text('removal.capacity.fits', { pods: required.pods, required: amount(required), nodes: candidates.length, available: amount(available) })
    : candidates.length === 0
      ? text('removal.capacity.nowhere', { pods: required.pods, required: amount(required) })
      : text('removal.capacity.tooBig', { unplaceable: unplaceable.length, pods: required.pods, nodes: candidates.length, required: amount(required), available: amount(available), names: unplaceable.join(', ') });
  return { fits, detail: { node: nodeName, message: coded.message, coded, required, available, candidates, excluded, unplaceable, unmanaged } };
}
