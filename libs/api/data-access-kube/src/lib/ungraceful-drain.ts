import { bare, message } from '@ccos/shared/messages';
import { failuresOf, stillOnNode, type DrainBlockingPod, type DrainEvent, type DrainResult } from './drain';
import { cordonAndPlan, drainReport } from './drain-opening';
import type { DrainOptions } from './drain-plan';
import { isStatus, type KubeClient } from './kube-client';

/** The options of {@link drainDeadNode}: kubectl's pod classes; no grace period, timeout or retries apply. */
export type DeadNodeDrainOptions = Pick<DrainOptions, 'force' | 'deleteEmptyDirData' | 'ignoreDaemonSets' | 'evictionConcurrency' | 'signal'>;

/**
 * Empties a node whose kubelet is gone: cordon, classify the pods like `kubectl drain` (same
 * refusals), then delete the pods a drain would evict with grace period 0, as `kubectl delete
 * pod --force --grace-period=0` does — no Eviction API, so PodDisruptionBudgets are not
 * consulted. An eviction would only mark them terminating: without a kubelet nothing confirms
 * the termination, and a graceful drain would wait forever. Use it only for a node that is not
 * Ready and whose host is known to be dead; the caller checks that. Events: `cordoned`,
 * `pod-skipped`, `pod-deleted` (deleted now), `pod-failed`, `done`.
 * @see https://kubernetes.io/docs/tasks/run-application/force-delete-stateful-set-pod/
 * @see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_delete/
 */
export async function drainDeadNode(client: KubeClient, node: string, options: DeadNodeDrainOptions = {}, onEvent: (event: DrainEvent) => void = () => undefined): Promise<DrainResult> {
  const report = drainReport(onEvent);
  const { emit, finish, fail } = report;
  const signal = options.signal;
  const opened = await cordonAndPlan(client, node, options, report, () => (signal?.aborted ? { failure: 'CANCELLED', reason: message('removal.drainCancelled') } : null));
  if (!('remove' in opened)) {
    return opened;
  }
  const { remove: queue, skipped } = opened;
  const failed: DrainBlockingPod[] = [];
  const deleted: string[] = [];
  const worker = async (): Promise<void> => {
    for (let entry = queue.shift(); entry && !signal?.aborted; entry = queue.shift()) {
      const { pod, name, namespace, uid } = entry;
      try {
        await client.call(
          `force delete pod ${pod}`,
          (callOptions) => client.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid } } }, callOptions),
          signal,
        );
        deleted.push(pod);
        emit({ type: 'pod-deleted', pod });
      } catch (error) {
        if (signal?.aborted) {
          return;
        }
        // Gone already, or replaced by a pod of the same name (another UID): nothing of ours is left.
        if (isStatus(error, 404) || isStatus(error, 409)) {
          deleted.push(pod);
          emit({ type: 'pod-deleted', pod });
          continue;
        }
        const said = error instanceof Error ? error.message : String(error);
        const coded = bare(message('drain.forceDeleteFailed', { error: said }));
        failed.push({ pod, message: said, messageCoded: coded });
        emit({ type: 'pod-failed', pod, message: said, coded });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.evictionConcurrency ?? 10) }, worker));
  if (signal?.aborted) {
    const notYet = message('drain.notDeletedYet');
    const pending = [...queue.map((entry) => ({ pod: entry.pod, message: notYet.message, messageCoded: bare(notYet) }))];
    return fail('CANCELLED', stillOnNode(message('removal.drainCancelled'), pending), pending);
  }
  if (failed.length > 0) {
    return fail('EVICTION_FAILED', failuresOf(failed), failed);
  }
  return finish({ ok: true, evicted: deleted, skipped });
}
