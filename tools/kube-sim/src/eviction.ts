import { ApiError, badRequest, failureStatus, forbidden, internalError, type Status } from './api-error';
import { cloneJson, isJsonObject, type JsonObject } from './json-value';
import { kubeTime, type KubeObject } from './kube-object';
import type { DeleteOptions, ObjectApi } from './object-api';
import { isPodHealthy, podsCoveredBy } from './pdb';
import type { UserInfo } from './user-info';

/** The disruptedPods map may not grow beyond this (MaxDisruptedPodSize). */
const MAX_DISRUPTED_PODS = 2000;

/** Message of the 429 a PodDisruptionBudget causes, verbatim from the API server. */
export const EVICTION_BLOCKED_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

function tooManyRequests(cause: string): ApiError {
  return new ApiError(failureStatus(429, 'TooManyRequests', EVICTION_BLOCKED_MESSAGE, { causes: [{ reason: 'DisruptionBudget', message: cause }] }));
}

/** Pods whose eviction never consults a budget: finished, pending or already terminating (canIgnorePDB). */
function canIgnoreBudget(pod: KubeObject): boolean {
  const phase = pod.status?.['phase'];
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp);
}

function deleteOptionsOf(body: JsonObject, user: UserInfo, dryRunQuery: boolean): DeleteOptions {
  const raw = isJsonObject(body['deleteOptions']) ? body['deleteOptions'] : {};
  const options: DeleteOptions = { user, dryRun: dryRunQuery || (Array.isArray(raw['dryRun']) && raw['dryRun'].includes('All')) };
  if (typeof raw['gracePeriodSeconds'] === 'number') {
    options.gracePeriodSeconds = raw['gracePeriodSeconds'];
  }
  if (isJsonObject(raw['preconditions'])) {
    const pre = raw['preconditions'];
    options.preconditions = {
      uid: typeof pre['uid'] === 'string' ? pre['uid'] : undefined,
      resourceVersion: typeof pre['resourceVersion'] === 'string' ? pre['resourceVersion'] : undefined,
    };
  }
  const policy = raw['propagationPolicy'];
  if (policy === 'Orphan' || policy === 'Background' || policy === 'Foreground') {
    options.propagationPolicy = policy;
  }
  return options;
}

/**
 * `POST pods/<name>/eviction`: deletes the pod unless the one PodDisruptionBudget covering it has no
 * disruption left (429 TooManyRequests with a DisruptionBudget cause, which kubectl drain retries);
 * on success the budget's disruptionsAllowed drops and the pod is recorded in disruptedPods.
 * @see https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/core/pod/storage/eviction.go
 */
export function evictPod(api: ObjectApi, namespace: string, name: string, body: unknown, user: UserInfo, dryRun: boolean): Status {
  if (!isJsonObject(body)) {
    throw badRequest('the body of the request was not a JSON object');
  }
  const meta = isJsonObject(body['metadata']) ? body['metadata'] : {};
  if (typeof meta['name'] === 'string' && meta['name'] !== name) {
    throw badRequest('name in URL does not match name in Eviction object');
  }
  const podDef = api.resource('', 'v1', 'pods');
  const pdbDef = api.resource('policy', 'v1', 'poddisruptionbudgets');
  const pod = api.get(podDef, namespace, name);
  const options = deleteOptionsOf(body, user, dryRun);
  api.admit({ operation: 'CREATE', def: podDef, subresource: 'eviction', namespace, name, object: body as unknown as KubeObject, oldObject: pod, user, dryRun: options.dryRun === true });
  const success: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: '', reason: '', code: 201 };
  delete (success as Partial<Status>).message;
  delete (success as Partial<Status>).reason;

  if (!canIgnoreBudget(pod)) {
    const budgets = podsCoveredByAny(api, pdbDef, pod);
    if (budgets.length > 1) {
      throw internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    }
    const pdb = budgets[0];
    if (pdb) {
      const status = pdb.status ?? {};
      const healthy = isPodHealthy(pod);
      const currentHealthy = Number(status['currentHealthy'] ?? 0);
      const desiredHealthy = Number(status['desiredHealthy'] ?? 0);
      const unhealthyMayGo =
        !healthy && (pdb.spec?.['unhealthyPodEvictionPolicy'] === 'AlwaysAllow' || (currentHealthy >= desiredHealthy && desiredHealthy > 0));
      if (!unhealthyMayGo) {
        checkAndDecrement(api, pdb, name, options.dryRun === true);
      }
    }
  }
  api.delete(podDef, namespace, name, options);
  return success;
}

function podsCoveredByAny(api: ObjectApi, pdbDef: ReturnType<ObjectApi['resource']>, pod: KubeObject): KubeObject[] {
  return api.store.list(pdbDef, { namespace: pod.metadata.namespace }).filter((pdb) => podsCoveredBy(pdb, [pod]).length > 0);
}

function checkAndDecrement(api: ObjectApi, pdb: KubeObject, podName: string, dryRun: boolean): void {
  const pdbDef = api.resource('policy', 'v1', 'poddisruptionbudgets');
  const status = pdb.status ?? {};
  const pdbName = pdb.metadata.name ?? '';
  if (Number(status['observedGeneration'] ?? 0) < (pdb.metadata.generation ?? 0)) {
    throw tooManyRequests(`The disruption budget ${pdbName} is still being processed by the server.`);
  }
  const allowed = Number(status['disruptionsAllowed'] ?? 0);
  if (allowed < 0) {
    throw forbidden({ resource: 'poddisruptionbudgets', group: 'policy', name: pdbName }, 'pdb disruptions allowed is negative');
  }
  const disrupted = isJsonObject(status['disruptedPods']) ? status['disruptedPods'] : {};
  if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) {
    throw forbidden({ resource: 'poddisruptionbudgets', group: 'policy', name: pdbName }, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (allowed === 0) {
    throw tooManyRequests(`The disruption budget ${pdbName} needs ${Number(status['desiredHealthy'] ?? 0)} healthy pods and has ${Number(status['currentHealthy'] ?? 0)} currently`);
  }
  if (dryRun) {
    return;
  }
  const updated = cloneJson(pdb);
  updated.status = { ...status, disruptionsAllowed: allowed - 1, disruptedPods: { ...disrupted, [podName]: kubeTime(api.clock.now()) } };
  api.store.replace(pdbDef, updated);
}
