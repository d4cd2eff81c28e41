import { isJsonObject, jsonEqual, type JsonObject } from './json-value';
import { kubeTime, type KubeObject } from './kube-object';
import { labelSelectorFromObject } from './selectors';

/** How long an evicted pod that has not yet been deleted counts as disrupted (DeletionTimeout). */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

/** `intstr.IntOrString` as found in minAvailable/maxUnavailable. */
export type IntOrPercent = number | string;

/**
 * Resolves an int-or-percent against a total, rounding up like GetScaledValueFromIntOrPercent(…, true).
 * @see https://github.com/kubernetes/apimachinery/blob/master/pkg/util/intstr/intstr.go
 */
export function scaledValue(value: IntOrPercent, total: number): number {
  if (typeof value === 'number') {
    return value;
  }
  const match = /^(\d+)%$/.exec(value);
  if (!match) {
    const n = Number(value);
    if (Number.isInteger(n)) {
      return n;
    }
    throw new Error(`invalid value for IntOrString: invalid value "${value}"`);
  }
  return Math.ceil((Number(match[1]) * total) / 100);
}

/** Whether a pod counts as healthy for a budget: Ready and not being deleted. */
export function isPodHealthy(pod: KubeObject): boolean {
  if (pod.metadata.deletionTimestamp) {
    return false;
  }
  const conditions = pod.status?.['conditions'];
  return Array.isArray(conditions) && conditions.some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True');
}

/** Pods a budget selects: same namespace, label selector (a missing selector selects nothing). */
export function podsCoveredBy(pdb: KubeObject, pods: readonly KubeObject[]): KubeObject[] {
  const selector = labelSelectorFromObject(pdb.spec?.['selector']);
  return pods.filter((pod) => pod.metadata.namespace === pdb.metadata.namespace && selector.matches(pod.metadata.labels));
}

/** The scale of the controller that owns a pod (a ReplicaSet's Deployment, StatefulSet, ...), if it has one. */
export type ControllerScale = (pod: KubeObject) => { uid: string; replicas: number } | undefined;

interface Counts {
  expectedPods: number;
  desiredHealthy: number;
}

function expectedScale(pods: readonly KubeObject[], scaleOf: ControllerScale): number {
  const controllers = new Map<string, number>();
  for (const pod of pods) {
    const scale = scaleOf(pod);
    if (!scale) {
      throw new Error(`found no controllers for pod "${pod.metadata.name ?? ''}"`);
    }
    controllers.set(scale.uid, scale.replicas);
  }
  return [...controllers.values()].reduce((a, b) => a + b, 0);
}

function counts(pdb: KubeObject, pods: readonly KubeObject[], scaleOf: ControllerScale): Counts {
  const maxUnavailable = pdb.spec?.['maxUnavailable'];
  const minAvailable = pdb.spec?.['minAvailable'];
  if (typeof maxUnavailable === 'number' || typeof maxUnavailable === 'string') {
    const expectedPods = expectedScale(pods, scaleOf);
    return { expectedPods, desiredHealthy: Math.max(0, expectedPods - scaledValue(maxUnavailable, expectedPods)) };
  }
  if (typeof minAvailable === 'number') {
    return { expectedPods: pods.length, desiredHealthy: minAvailable };
  }
  if (typeof minAvailable === 'string') {
    const expectedPods = expectedScale(pods, scaleOf);
    return { expectedPods, desiredHealthy: scaledValue(minAvailable, expectedPods) };
  }
  return { expectedPods: pods.length, desiredHealthy: 0 };
}

function condition(previous: JsonObject | undefined, status: 'True' | 'False', reason: string, message: string, now: Date): JsonObject[] {
  const old = Array.isArray(previous?.['conditions']) ? previous['conditions'].find((c) => isJsonObject(c) && c['type'] === 'DisruptionAllowed') : undefined;
  const unchanged = isJsonObject(old) && old['status'] === status && old['reason'] === reason && old['message'] === message;
  return [
    {
      type: 'DisruptionAllowed',
      status,
      reason,
      message,
      observedGeneration: 0,
      lastTransitionTime: unchanged && typeof old['lastTransitionTime'] === 'string' ? old['lastTransitionTime'] : kubeTime(now),
    },
  ];
}

/**
 * Computes a PodDisruptionBudget's status the way the disruption controller does:
 * expectedPods/desiredHealthy from minAvailable (int: matching pods; percent: controller scale) or
 * maxUnavailable (controller scale), currentHealthy = Ready pods not being deleted and not recently
 * evicted, disruptionsAllowed = max(0, currentHealthy - desiredHealthy) (0 while no pods are
 * expected). A percentage or maxUnavailable over pods without a scalable controller fails safe
 * (disruptionsAllowed 0, condition SyncFailed).
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/disruption/disruption.go
 * @see https://kubernetes.io/docs/tasks/run-application/configure-pdb/
 */
export function computePdbStatus(pdb: KubeObject, namespacePods: readonly KubeObject[], scaleOf: ControllerScale, now: Date): JsonObject {
  const previous = pdb.status;
  const generation = pdb.metadata.generation ?? 1;
  const pods = podsCoveredBy(pdb, namespacePods);
  const podsByName = new Map(pods.map((p) => [p.metadata.name ?? '', p]));
  const disruptedPods: JsonObject = {};
  const oldDisrupted = isJsonObject(previous?.['disruptedPods']) ? previous['disruptedPods'] : {};
  for (const [name, time] of Object.entries(oldDisrupted)) {
    const pod = podsByName.get(name);
    if (pod && !pod.metadata.deletionTimestamp && typeof time === 'string' && Date.parse(time) + DISRUPTED_POD_TIMEOUT_MS > now.getTime()) {
      disruptedPods[name] = time;
    }
  }
  const base: JsonObject = { ...(previous ?? {}), observedGeneration: generation };
  let result: Counts;
  try {
    result = counts(pdb, pods, scaleOf);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const failed: JsonObject = { ...base, disruptionsAllowed: 0, conditions: condition(previous, 'False', 'SyncFailed', message, now) };
    (failed['conditions'] as JsonObject[])[0]['observedGeneration'] = generation;
    return failed;
  }
  const currentHealthy = pods.filter((pod) => isPodHealthy(pod) && disruptedPods[pod.metadata.name ?? ''] === undefined).length;
  const raw = currentHealthy - result.desiredHealthy;
  const disruptionsAllowed = result.expectedPods <= 0 || raw <= 0 ? 0 : raw;
  const status: JsonObject = {
    observedGeneration: generation,
    disruptionsAllowed,
    currentHealthy,
    desiredHealthy: result.desiredHealthy,
    expectedPods: result.expectedPods,
    conditions: condition(previous, disruptionsAllowed > 0 ? 'True' : 'False', disruptionsAllowed > 0 ? 'SufficientPods' : 'InsufficientPods', '', now),
  };
  (status['conditions'] as JsonObject[])[0]['observedGeneration'] = generation;
  if (Object.keys(disruptedPods).length > 0) {
    status['disruptedPods'] = disruptedPods;
  }
  return status;
}

/** True when two computed statuses differ in anything but timestamps. */
export function pdbStatusChanged(a: JsonObject | undefined, b: JsonObject): boolean {
  return !jsonEqual(a ?? {}, b);
}
