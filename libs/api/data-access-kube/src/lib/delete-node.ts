import { type CodedText, message } from '@ccos/shared/messages';
import { isStatus, type KubeClient } from './kube-client';

/** Outcome of {@link deleteNode}. */
export type DeleteNodeResult =
  | { ok: true; /** False when the Node was already gone. */ existed: boolean }
  | { ok: false; reason: CodedText };

/**
 * Deletes a Node object. With `uid`, only that Node: a Node of the same name registered again
 * since (by a kubelet that was not stopped) is left alone and reported. Stop the kubelet first,
 * and never delete a Node whose drain failed.
 * Throws KubeApiError for failures other than "not found" and "UID mismatch".
 * @see https://kubernetes.io/docs/concepts/architecture/nodes/#manual-node-administration
 * @see https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/#delete-delete-a-node
 */
export async function deleteNode(client: KubeClient, name: string, options: { uid?: string; signal?: AbortSignal } = {}): Promise<DeleteNodeResult> {
  try {
    await client.call(
      `delete node ${name}`,
      (callOptions) => client.core.deleteNode({ name, body: options.uid ? { preconditions: { uid: options.uid } } : {} }, callOptions),
      options.signal,
    );
    return { ok: true, existed: true };
  } catch (error) {
    if (isStatus(error, 404)) {
      return { ok: true, existed: false };
    }
    if (isStatus(error, 409)) {
      return { ok: false, reason: message('removal.nodeRegisteredAgain', { node: name, error: error.status?.message ?? error.message }) };
    }
    throw error;
  }
}
