import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeClient } from './kube-client';

/** Outcome of a cordon or uncordon. */
export interface CordonResult {
  node: string;
  /** The Node's `spec.unschedulable` afterwards. */
  unschedulable: boolean;
  /** False when the Node already was in the desired state (kubectl: "already cordoned"). */
  changed: boolean;
}

/**
 * Sets `spec.unschedulable` the way kubectl does: read the Node, and only if it differs send a
 * strategic merge patch (`{"spec":{"unschedulable":true}}`, or `null` to uncordon, which is what
 * kubectl's two-way merge patch of an omitempty field produces). Throws KubeApiError (404 when the
 * Node does not exist).
 * @see https://github.com/kubernetes/kubectl/blob/master/pkg/drain/cordon.go
 */
export async function setUnschedulable(client: KubeClient, name: string, desired: boolean, signal?: AbortSignal): Promise<CordonResult> {
  const node = await client.call(`read node ${name}`, (options) => client.core.readNode({ name }, options), signal);
  if ((node.spec?.unschedulable === true) === desired) {
    return { node: name, unschedulable: desired, changed: false };
  }
  const body = { spec: { unschedulable: desired ? true : null } };
  const patched = await client.call(
    `${desired ? 'cordon' : 'uncordon'} node ${name}`,
    (options) => client.core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch, options)),
    signal,
  );
  return { node: name, unschedulable: patched.spec?.unschedulable === true, changed: true };
}

/**
 * Marks a Node unschedulable (`kubectl cordon`).
 * @see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_cordon/
 */
export function cordonNode(client: KubeClient, name: string, signal?: AbortSignal): Promise<CordonResult> {
  return setUnschedulable(client, name, true, signal);
}

/**
 * Makes a Node schedulable again (`kubectl uncordon`).
 * @see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_uncordon/
 */
export function uncordonNode(client: KubeClient, name: string, signal?: AbortSignal): Promise<CordonResult> {
  return setUnschedulable(client, name, false, signal);
}
