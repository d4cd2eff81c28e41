import type { FieldError } from '../api-error';
import { cloneJson, isJsonObject, jsonEqual, type JsonObject } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';
import { fieldAt } from './field-labels';
import { STATUS_WRITE } from './status-subresource';

/** Default `spec.terminationGracePeriodSeconds`. */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;

/** Field selectors the real server supports for pods. */
export const POD_FIELD_LABELS = {
  'spec.nodeName': fieldAt('spec.nodeName', ''),
  'spec.restartPolicy': fieldAt('spec.restartPolicy', ''),
  'spec.schedulerName': fieldAt('spec.schedulerName', ''),
  'spec.serviceAccountName': fieldAt('spec.serviceAccountName', ''),
  'spec.hostNetwork': fieldAt('spec.hostNetwork', 'false'),
  'status.phase': fieldAt('status.phase', ''),
  'status.podIP': fieldAt('status.podIP', ''),
  'status.nominatedNodeName': fieldAt('status.nominatedNodeName', ''),
};

function containersOf(spec: JsonObject, field: string): JsonObject[] {
  const list = spec[field];
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

function defaultContainer(container: JsonObject): void {
  container['terminationMessagePath'] ??= '/dev/termination-log';
  container['terminationMessagePolicy'] ??= 'File';
  container['resources'] ??= {};
  if (container['imagePullPolicy'] === undefined && typeof container['image'] === 'string') {
    const image = container['image'];
    const lastPart = image.slice(image.lastIndexOf('/') + 1);
    const tagged = lastPart.includes(':') || image.includes('@');
    container['imagePullPolicy'] = !tagged || image.endsWith(':latest') ? 'Always' : 'IfNotPresent';
  }
}

/**
 * The API server's pod defaulting (pkg/apis/core/v1/defaults.go), the part visible to clients.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/core/v1/defaults.go
 */
export function defaultPod(pod: KubeObject): void {
  const spec = (pod.spec ??= {});
  spec['restartPolicy'] ??= 'Always';
  spec['terminationGracePeriodSeconds'] ??= DEFAULT_TERMINATION_GRACE_SECONDS;
  spec['dnsPolicy'] ??= 'ClusterFirst';
  spec['schedulerName'] ??= 'default-scheduler';
  spec['securityContext'] ??= {};
  spec['enableServiceLinks'] ??= true;
  for (const field of ['containers', 'initContainers']) {
    containersOf(spec, field).forEach(defaultContainer);
  }
}

function validateContainers(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const containers = containersOf(spec, 'containers');
  if (containers.length === 0) {
    errors.push({ type: 'Required', field: 'spec.containers' });
  }
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const name = c['name'];
    if (typeof name !== 'string' || name === '') {
      errors.push({ type: 'Required', field: `spec.containers[${i}].name` });
    } else if (seen.has(name)) {
      errors.push({ type: 'Duplicate', field: `spec.containers[${i}].name`, value: name });
    } else {
      seen.add(name);
    }
    if (typeof c['image'] !== 'string' || c['image'] === '') {
      errors.push({ type: 'Required', field: `spec.containers[${i}].image` });
    }
  });
  return errors;
}

/** The spec with the fields a pod update may change blanked out, for comparison. */
function immutablePart(spec: JsonObject | undefined): JsonObject {
  const copy = cloneJson(spec ?? {});
  for (const field of ['containers', 'initContainers']) {
    containersOf(copy, field).forEach((c) => delete c['image']);
  }
  delete copy['activeDeadlineSeconds'];
  delete copy['tolerations'];
  delete copy['schedulingGates'];
  delete copy['terminationGracePeriodSeconds'];
  return copy;
}

/**
 * Seconds a deletion waits: 0 for pods never scheduled or already finished, else the requested
 * grace or the pod's own `terminationGracePeriodSeconds` (pod strategy CheckGracefulDelete).
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/core/pod/strategy.go
 */
export function podDeletionGracePeriod(pod: KubeObject, requested: number | undefined): number {
  const phase = pod.status?.['phase'];
  if (!pod.spec?.['nodeName'] || phase === 'Succeeded' || phase === 'Failed') {
    return 0;
  }
  const own = pod.spec['terminationGracePeriodSeconds'];
  const grace = requested ?? (typeof own === 'number' ? own : DEFAULT_TERMINATION_GRACE_SECONDS);
  return Math.max(0, grace);
}

/** Pod strategy: defaults, status reset on create, mostly immutable spec, graceful deletion. */
export const POD_STRATEGY: ResourceStrategy = {
  defaults: defaultPod,
  prepareForCreate(pod) {
    pod.status = { phase: 'Pending', qosClass: 'BestEffort' };
  },
  validateCreate: (pod) => validateContainers(pod.spec ?? {}),
  prepareForUpdate(pod, old) {
    pod.status = old.status;
  },
  validateUpdate(pod, old) {
    const errors = validateContainers(pod.spec ?? {});
    if (!jsonEqual(immutablePart(pod.spec), immutablePart(old.spec))) {
      errors.push({
        type: 'Forbidden',
        field: 'spec',
        detail:
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      });
    }
    return errors;
  },
  deletionGracePeriod: podDeletionGracePeriod,
  subresourceWrites: { status: STATUS_WRITE },
};
