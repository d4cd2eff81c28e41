import { humanDuration } from './human-duration';
import { isJsonObject, type JsonObject, type JsonValue } from './json-value';
import type { KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import { csrConditions } from './resources/certificate-signing-requests';

/** `includeObject` of a Table request. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

interface Column {
  name: string;
  type: 'string' | 'integer' | 'date' | 'number' | 'boolean';
  format?: string;
  description: string;
  priority?: number;
  cell: (obj: KubeObject, now: number) => JsonValue;
}

function age(obj: KubeObject, now: number): string {
  const created = obj.metadata.creationTimestamp;
  return created ? humanDuration(now - Date.parse(created)) : '<unknown>';
}

function list(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

function str(value: unknown, fallback = '<none>'): string {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : fallback;
}

const NAME: Column = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', cell: (o) => o.metadata.name ?? '' };
const AGE: Column = { name: 'Age', type: 'string', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: age };

function subjectNames(binding: KubeObject, kind: string): string {
  const names = list(binding['subjects']).filter((s) => s['kind'] === kind).map((s) => (kind === 'ServiceAccount' ? `${String(s['namespace'] ?? '')}/${String(s['name'] ?? '')}` : String(s['name'] ?? '')));
  return names.length > 0 ? names.join(', ') : '';
}

const BINDING_COLUMNS: Column[] = [
  NAME,
  { name: 'Role', type: 'string', description: 'RoleRef is the reference to the role.', cell: (b) => { const ref = b['roleRef'] as JsonObject | undefined; return `${String(ref?.['kind'] ?? '')}/${String(ref?.['name'] ?? '')}`; } },
  AGE,
  { name: 'Users', type: 'string', description: 'Users in the binding.', priority: 1, cell: (b) => subjectNames(b, 'User') },
  { name: 'Groups', type: 'string', description: 'Groups in the binding.', priority: 1, cell: (b) => subjectNames(b, 'Group') },
  { name: 'ServiceAccounts', type: 'string', description: 'ServiceAccounts in the binding.', priority: 1, cell: (b) => subjectNames(b, 'ServiceAccount') },
];

function nodeStatus(node: KubeObject): string {
  const ready = list(node.status?.['conditions']).find((c) => c['type'] === 'Ready');
  const states = [ready?.['status'] === 'True' ? 'Ready' : ready?.['status'] === 'False' ? 'NotReady' : 'Unknown'];
  if (node.spec?.['unschedulable'] === true) {
    states.push('SchedulingDisabled');
  }
  return states.join(',');
}

function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/')) {
      roles.add(key.slice('node-role.kubernetes.io/'.length));
    } else if (key === 'kubernetes.io/role' && value) {
      roles.add(value);
    }
  }
  return roles.size === 0 ? '<none>' : [...roles].filter(Boolean).sort().join(',');
}

function nodeAddress(node: KubeObject, type: string): string {
  return str(list(node.status?.['addresses']).find((a) => a['type'] === type)?.['address']);
}

function nodeInfo(node: KubeObject, field: string): string {
  const info = node.status?.['nodeInfo'];
  return isJsonObject(info) ? str(info[field], '<unknown>') : '<unknown>';
}

function podStatus(pod: KubeObject): string {
  let reason = str(pod.status?.['reason'], str(pod.status?.['phase'], 'Unknown'));
  for (const cs of list(pod.status?.['containerStatuses'])) {
    const state = isJsonObject(cs['state']) ? cs['state'] : {};
    if (isJsonObject(state['waiting']) && state['waiting']['reason']) {
      reason = String(state['waiting']['reason']);
    } else if (isJsonObject(state['terminated'])) {
      reason = str(state['terminated']['reason'], 'Completed');
    }
  }
  if (pod.metadata.deletionTimestamp) {
    reason = pod.status?.['reason'] === 'NodeLost' ? 'Unknown' : 'Terminating';
  }
  return reason;
}

function podReady(pod: KubeObject): string {
  const statuses = list(pod.status?.['containerStatuses']);
  const total = list(pod.spec?.['containers']).length;
  return `${statuses.filter((s) => s['ready'] === true).length}/${total}`;
}

function podRestarts(pod: KubeObject): number {
  return list(pod.status?.['containerStatuses']).reduce((sum, s) => sum + (typeof s['restartCount'] === 'number' ? s['restartCount'] : 0), 0);
}

function csrCondition(csr: KubeObject): string {
  const types = csrConditions(csr).filter((c) => c['status'] === 'True').map((c) => String(c['type']));
  if (types.length === 0) {
    types.push('Pending');
  }
  if (csr.status?.['certificate']) {
    types.push('Issued');
  }
  return types.join(',');
}

function dataCount(obj: KubeObject): number {
  const data = obj['data'];
  const binary = obj['binaryData'];
  return (isJsonObject(data) ? Object.keys(data).length : 0) + (isJsonObject(binary) ? Object.keys(binary).length : 0);
}

function num(obj: KubeObject, part: 'spec' | 'status', field: string): number {
  const value = obj[part]?.[field];
  return typeof value === 'number' ? value : 0;
}

/** Columns of the tables the real server prints (pkg/printers/internalversion/printers.go). */
const COLUMNS: Record<string, Column[]> = {
  'v1/nodes': [
    NAME,
    { name: 'Status', type: 'string', description: 'The status of the node', cell: nodeStatus },
    { name: 'Roles', type: 'string', description: 'The roles of the node', cell: nodeRoles },
    AGE,
    { name: 'Version', type: 'string', description: 'Kubelet Version reported by the node.', cell: (n) => nodeInfo(n, 'kubeletVersion') },
    { name: 'Internal-IP', type: 'string', priority: 1, description: 'List of internal IPs.', cell: (n) => nodeAddress(n, 'InternalIP') },
    { name: 'External-IP', type: 'string', priority: 1, description: 'List of external IPs.', cell: (n) => nodeAddress(n, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', priority: 1, description: 'OS Image reported by the node.', cell: (n) => nodeInfo(n, 'osImage') },
    { name: 'Kernel-Version', type: 'string', priority: 1, description: 'Kernel Version reported by the node.', cell: (n) => nodeInfo(n, 'kernelVersion') },
    { name: 'Container-Runtime', type: 'string', priority: 1, description: 'Container Runtime Version reported by the node.', cell: (n) => nodeInfo(n, 'containerRuntimeVersion') },
  ],
  'v1/pods': [
    NAME,
    { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', cell: podReady },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', cell: podStatus },
    { name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted.', cell: (p) => String(podRestarts(p)) },
    AGE,
    { name: 'IP', type: 'string', priority: 1, description: 'IP address allocated to the pod.', cell: (p) => str(p.status?.['podIP']) },
    { name: 'Node', type: 'string', priority: 1, description: 'Name of the Node this pod is assigned to.', cell: (p) => str(p.spec?.['nodeName']) },
    { name: 'Nominated Node', type: 'string', priority: 1, description: 'Name of the Node the pod is nominated to.', cell: (p) => str(p.status?.['nominatedNodeName']) },
    { name: 'Readiness Gates', type: 'string', priority: 1, description: 'Pod readiness gates.', cell: (p) => (list(p.spec?.['readinessGates']).length === 0 ? '<none>' : String(list(p.spec?.['readinessGates']).length)) },
  ],
  'certificates.k8s.io/v1/certificatesigningrequests': [
    NAME,
    AGE,
    { name: 'SignerName', type: 'string', description: 'Requested signer.', cell: (c) => str(c.spec?.['signerName']) },
    { name: 'Requestor', type: 'string', description: 'Request originator.', cell: (c) => str(c.spec?.['username']) },
    { name: 'RequestedDuration', type: 'string', description: 'Requested duration.', cell: (c) => (typeof c.spec?.['expirationSeconds'] === 'number' ? humanDuration(c.spec['expirationSeconds'] * 1000) : '<none>') },
    { name: 'Condition', type: 'string', description: 'Approval status.', cell: csrCondition },
  ],
  'v1/namespaces': [NAME, { name: 'Status', type: 'string', description: 'The status of the namespace', cell: (n) => str(n.status?.['phase'], '') }, AGE],
  'v1/secrets': [
    NAME,
    { name: 'Type', type: 'string', description: 'The type of the secret', cell: (s) => str(s['type'], '') },
    { name: 'Data', type: 'string', description: 'The number of keys in the secret', cell: (s) => String(dataCount(s)) },
    AGE,
  ],
  'v1/configmaps': [NAME, { name: 'Data', type: 'string', description: 'The number of keys.', cell: (c) => String(dataCount(c)) }, AGE],
  'v1/serviceaccounts': [NAME, { name: 'Secrets', type: 'string', description: 'Number of secrets.', cell: (s) => String(list(s['secrets']).length) }, AGE],
  'apps/v1/deployments': [
    NAME,
    { name: 'Ready', type: 'string', description: 'Ready replicas / desired.', cell: (d) => `${num(d, 'status', 'readyReplicas')}/${num(d, 'spec', 'replicas')}` },
    { name: 'Up-to-date', type: 'string', description: 'Updated replicas.', cell: (d) => String(num(d, 'status', 'updatedReplicas')) },
    { name: 'Available', type: 'string', description: 'Available replicas.', cell: (d) => String(num(d, 'status', 'availableReplicas')) },
    AGE,
  ],
  'apps/v1/replicasets': [
    NAME,
    { name: 'Desired', type: 'string', description: 'Desired replicas.', cell: (r) => String(num(r, 'spec', 'replicas')) },
    { name: 'Current', type: 'string', description: 'Current replicas.', cell: (r) => String(num(r, 'status', 'replicas')) },
    { name: 'Ready', type: 'string', description: 'Ready replicas.', cell: (r) => String(num(r, 'status', 'readyReplicas')) },
    AGE,
  ],
  'apps/v1/daemonsets': [
    NAME,
    { name: 'Desired', type: 'string', description: 'Desired pods.', cell: (d) => String(num(d, 'status', 'desiredNumberScheduled')) },
    { name: 'Current', type: 'string', description: 'Current pods.', cell: (d) => String(num(d, 'status', 'currentNumberScheduled')) },
    { name: 'Ready', type: 'string', description: 'Ready pods.', cell: (d) => String(num(d, 'status', 'numberReady')) },
    { name: 'Up-to-date', type: 'string', description: 'Updated pods.', cell: (d) => String(num(d, 'status', 'updatedNumberScheduled')) },
    { name: 'Available', type: 'string', description: 'Available pods.', cell: (d) => String(num(d, 'status', 'numberAvailable')) },
    AGE,
  ],
  'apps/v1/statefulsets': [NAME, { name: 'Ready', type: 'string', description: 'Ready replicas / desired.', cell: (s) => `${num(s, 'status', 'readyReplicas')}/${num(s, 'spec', 'replicas')}` }, AGE],
  'policy/v1/poddisruptionbudgets': [
    NAME,
    { name: 'Min Available', type: 'string', description: 'minAvailable', cell: (p) => str(p.spec?.['minAvailable'], 'N/A') },
    { name: 'Max Unavailable', type: 'string', description: 'maxUnavailable', cell: (p) => str(p.spec?.['maxUnavailable'], 'N/A') },
    { name: 'Allowed Disruptions', type: 'integer', description: 'Allowed disruptions', cell: (p) => num(p, 'status', 'disruptionsAllowed') },
    AGE,
  ],
  'rbac.authorization.k8s.io/v1/rolebindings': BINDING_COLUMNS,
  'rbac.authorization.k8s.io/v1/clusterrolebindings': BINDING_COLUMNS,
  'coordination.k8s.io/v1/leases': [NAME, { name: 'Holder', type: 'string', description: 'Holder identity.', cell: (l) => str(l.spec?.['holderIdentity'], '') }, AGE],
};

const DEFAULT_COLUMNS: Column[] = [
  NAME,
  { name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', cell: (o) => o.metadata.creationTimestamp ?? '' },
];

function columnsFor(def: ResourceDefinition): Column[] {
  return COLUMNS[`${def.group ? `${def.group}/` : ''}${def.version}/${def.resource}`] ?? DEFAULT_COLUMNS;
}

/** `metav1.PartialObjectMetadata` of an object. */
export function partialObjectMetadata(obj: KubeObject): JsonObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata as unknown as JsonObject };
}

/**
 * Renders objects as a `meta.k8s.io/v1` Table, what `kubectl get` asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-tables
 */
export function toTable(
  def: ResourceDefinition,
  objects: readonly KubeObject[],
  options: { includeObject: IncludeObject; resourceVersion: string; continueToken?: string; remainingItemCount?: number; now: number },
): JsonObject {
  const columns = columnsFor(def);
  const { now } = options;
  const metadata: JsonObject = { resourceVersion: options.resourceVersion };
  if (options.continueToken) {
    metadata['continue'] = options.continueToken;
  }
  if (options.remainingItemCount !== undefined) {
    metadata['remainingItemCount'] = options.remainingItemCount;
  }
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 })),
    rows: objects.map((obj) => {
      const row: JsonObject = { cells: columns.map((c) => c.cell(obj, now)) };
      if (options.includeObject === 'Object') {
        row['object'] = obj as unknown as JsonObject;
      } else if (options.includeObject === 'Metadata') {
        row['object'] = partialObjectMetadata(obj);
      }
      return row;
    }),
  };
}
