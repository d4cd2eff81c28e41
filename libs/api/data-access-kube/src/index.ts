export {
  createKubeClient,
  isStatus,
  KubeApiError,
  KubeClientConfigError,
  type KubeApiErrorKind,
  type KubeClient,
  type KubeClientOptions,
  type KubeCredentials,
  type KubeStatus,
  type WatchLineHandler,
} from './lib/kube-client';
export { startInformer, type Informer, type InformerEvent, type InformerObject, type InformerOptions, type InformerSource, type ListPage, type WatchEventType } from './lib/informer';
export { listNodes, summarizeNode, watchNodes, isoTime, CONTROL_PLANE_TAINT_KEYS, NODE_ROLE_LABEL_PREFIX, type NodeEvent, type NodeInventory, type NodeSummary, type NodeTaint } from './lib/node-inventory';
export { cpuMillicores, parseQuantity, wholeUnits } from './lib/quantity';
