import type { AdmissionPlugin, AdmissionRequest } from '../admission';
import { jsonEqual } from '../json-value';
import type { KubeObject } from '../kube-object';
import { forbiddenError } from './authorizer';
import { nodeIdentity } from './node-authorizer';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

function refuse(request: AdmissionRequest, why: string): never {
  throw forbiddenError({ resource: request.def.resource, group: request.def.group, name: request.name }, why);
}

function boundNode(pod: KubeObject | undefined): string {
  const nodeName = pod?.spec?.['nodeName'];
  return typeof nodeName === 'string' ? nodeName : '';
}

function admitPod(request: AdmissionRequest, node: string): void {
  const { operation, subresource } = request;
  if (subresource === '' && operation === 'CREATE') {
    const pod = request.object;
    if (pod?.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined) {
      refuse(request, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    }
    if (boundNode(pod) !== node) {
      refuse(request, `node "${node}" can only create pods with spec.nodeName set to itself`);
    }
    return;
  }
  if (subresource === '' && operation === 'DELETE') {
    if (boundNode(request.oldObject) !== node) {
      refuse(request, `node "${node}" can only delete pods with spec.nodeName set to itself`);
    }
    return;
  }
  if (subresource === 'status') {
    if (boundNode(request.oldObject) !== node) {
      refuse(request, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    }
    return;
  }
  if (subresource === 'eviction') {
    if (boundNode(request.oldObject) !== node) {
      refuse(request, `node "${node}" can only evict pods with spec.nodeName set to itself`);
    }
    return;
  }
  refuse(request, `node "${node}" is not allowed to ${operation === 'UPDATE' ? 'update' : 'modify'} pods`);
}

function admitNode(request: AdmissionRequest, node: string): void {
  if (request.name !== node) {
    refuse(request, `node "${node}" is not allowed to modify node "${request.name}"`);
  }
  if (request.operation === 'UPDATE' && request.subresource === '' && !jsonEqual(request.object?.spec?.['taints'], request.oldObject?.spec?.['taints'])) {
    refuse(request, `node "${node}" is not allowed to modify taints`);
  }
}

/**
 * NodeRestriction admission: a kubelet may write only its own Node (and not its taints once
 * registered), only mirror pods bound to itself, only the status of and evictions for pods bound
 * to itself. (The label rules for `node-restriction.kubernetes.io/` and `kubernetes.io/` labels are
 * not enforced; see the README.)
 * @see https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction
 */
export const nodeRestriction: AdmissionPlugin = (request) => {
  const node = nodeIdentity(request.user);
  if (node === undefined || request.def.group !== '') {
    return;
  }
  if (request.def.resource === 'pods') {
    admitPod(request, node);
  } else if (request.def.resource === 'nodes') {
    admitNode(request, node);
  }
};
