import { cloneJson, isJsonObject } from './json-value';
import { kubeTime } from './kube-object';
import type { ObjectApi } from './object-api';
import type { StoreEvent } from './store';

const GC_USER = { username: 'system:serviceaccount:kube-system:pod-garbage-collector', groups: ['system:serviceaccounts'] };

/**
 * The pod garbage collector's orphan rule: pods bound to a Node that was deleted, and still does not
 * exist after the quarantine, are marked Failed with a DisruptionTarget condition (DeletionByPodGC)
 * and deleted at once — what makes DaemonSet and mirror pods disappear after `kubectl delete node`.
 * @see https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-garbage-collection
 */
export class PodGcController {
  private readonly unsubscribe: () => void;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly api: ObjectApi, private readonly quarantineMs: number) {
    this.unsubscribe = api.store.subscribe((event) => this.onEvent(event));
  }

  private onEvent(event: StoreEvent): void {
    if (event.type !== 'DELETED' || event.resource.group !== '' || event.resource.resource !== 'nodes') {
      return;
    }
    const nodeName = event.object.metadata.name ?? '';
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.collect(nodeName);
    }, this.quarantineMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Deletes the pods of a node that does not exist (any more). */
  collect(nodeName: string): void {
    const nodes = this.api.resource('', 'v1', 'nodes');
    const pods = this.api.resource('', 'v1', 'pods');
    if (this.api.store.get(nodes, undefined, nodeName)) {
      return;
    }
    for (const pod of this.api.store.list(pods, { nodeName })) {
      const phase = pod.status?.['phase'];
      if (phase !== 'Succeeded' && phase !== 'Failed') {
        const failed = cloneJson(pod);
        const conditions = Array.isArray(failed.status?.['conditions']) ? failed.status['conditions'].filter((c) => !(isJsonObject(c) && c['type'] === 'DisruptionTarget')) : [];
        failed.status = {
          ...failed.status,
          phase: 'Failed',
          conditions: [
            ...conditions,
            { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists', lastTransitionTime: kubeTime(this.api.clock.now()) },
          ],
        };
        this.api.store.replace(pods, failed);
      }
      this.api.delete(pods, pod.metadata.namespace, pod.metadata.name ?? '', { user: GC_USER, gracePeriodSeconds: 0 });
    }
  }

  stop(): void {
    this.unsubscribe();
    for (const timer of this.timers) {
      clearTimeout(timer);
    }
    this.timers.clear();
  }
}
