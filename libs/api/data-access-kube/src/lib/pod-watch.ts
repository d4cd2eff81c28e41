import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { startInformer, type InformerEvent, type InformerOptions } from './informer';
import type { KubeClient } from './kube-client';

/**
 * Pods bound to a node, as cluster-autoscaler's scheduled-pod lister selects them: pending pods
 * are none of a removal's business, and a pod entering the selection when it is bound arrives as
 * ADDED.
 */
export const SCHEDULED_PODS_SELECTOR = 'spec.nodeName!=';

const BY_NODE = 'node';

/** A change of a cached pod (the pod as {@link podForPlanning} keeps it). */
export type PodEvent = InformerEvent<V1Pod>;

/** A running watch of every scheduled pod of a cluster, indexed by node. */
export interface PodWatch {
  /** Resolves once the first list is in the cache. */
  readonly synced: Promise<void>;
  /** Whether the first list is in the cache: before that, {@link podsOnNode} knows nothing. */
  isSynced(): boolean;
  /** The node's pods, as {@link podForPlanning} keeps them. */
  podsOnNode(nodeName: string): V1Pod[];
  /** Cuts the informer's wait after a failure short. */
  retryNow(): void;
  stop(): Promise<void>;
}

function containerForPlanning({ name, resources, restartPolicy }: V1Container): V1Container {
  return { name, resources: resources && { requests: resources.requests, limits: resources.limits }, restartPolicy };
}

/**
 * What a drain plan and a capacity check read of a pod (its identity, labels, annotations, owners,
 * deletion, node, emptyDir volumes, container requests and limits, overhead, phase), copied into
 * plain objects: a cache of every pod of a cluster then holds a fraction of what the API sends.
 * (Keeping client-node's own metadata and resources objects, managedFields dropped, cost
 * 1.4 kB of heap per pod against 1.1 kB.)
 */
export function podForPlanning(pod: V1Pod): V1Pod {
  const meta = pod.metadata;
  const spec = pod.spec;
  return {
    metadata: meta && {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      labels: meta.labels,
      annotations: meta.annotations,
      ownerReferences: meta.ownerReferences?.map(({ apiVersion, kind, name, uid, controller }) => ({ apiVersion, kind, name, uid, controller })),
      deletionTimestamp: meta.deletionTimestamp,
    },
    spec: spec && {
      nodeName: spec.nodeName,
      volumes: spec.volumes?.filter((volume) => volume.emptyDir).map(({ name, emptyDir }) => ({ name, emptyDir })),
      containers: spec.containers.map(containerForPlanning),
      initContainers: spec.initContainers?.map(containerForPlanning),
      overhead: spec.overhead,
    },
    status: pod.status && { phase: pod.status.phase },
  };
}

/**
 * Watches every scheduled pod informer-style (list, watch from the list's resourceVersion, list
 * again on 410 Gone, reconnect with backoff) and indexes them by node, so that reading a node's
 * pods is a lookup rather than a list per question.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 * @see https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/utils/kubernetes/listers.go
 */
export function watchPods(client: KubeClient, onEvent: (event: PodEvent) => void, options: InformerOptions = {}): PodWatch {
  let synced = false;
  const informer = startInformer<V1Pod>(
    client,
    {
      path: '/api/v1/pods',
      description: 'list pods',
      list: (page, callOptions) => client.core.listPodForAllNamespaces({ ...page, fieldSelector: SCHEDULED_PODS_SELECTOR }, callOptions),
      fieldSelector: SCHEDULED_PODS_SELECTOR,
      transform: podForPlanning,
      indexers: { [BY_NODE]: (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []) },
    },
    onEvent,
    options,
  );
  void informer.synced.then(() => {
    synced = true;
  });
  return {
    synced: informer.synced,
    isSynced: () => synced,
    podsOnNode: (nodeName) => informer.byIndex(BY_NODE, nodeName),
    retryNow: () => informer.retryNow(),
    stop: () => informer.stop(),
  };
}
