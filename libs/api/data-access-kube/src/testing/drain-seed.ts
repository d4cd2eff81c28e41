// Seeds for kube-sim of the drain specs (a node's pods of each class kubectl drain tells apart),
// as YAML documents built from what differs between them.

/** A controller that owns pods, by its uid. */
export interface SeedOwner {
  readonly kind: 'ReplicaSet' | 'DaemonSet';
  readonly name: string;
  readonly uid: string;
}

export interface SeedPod {
  readonly name: string;
  readonly namespace: string;
  readonly node: string;
  /** Its `app` label, which controllers and budgets select. */
  readonly app?: string;
  readonly owner?: SeedOwner;
  readonly graceSeconds?: number;
  /** An emptyDir volume: local storage, which a drain refuses without deleteEmptyDirData. */
  readonly emptyDir?: boolean;
  /** The mirror of a static pod, which a drain skips. */
  readonly mirror?: boolean;
  /** Default Ready: Running with its Ready condition (what a budget counts as healthy). */
  readonly state?: 'Ready' | 'Running' | 'Succeeded';
}

/** One seed of YAML documents. */
export function seedOf(...documents: string[]): string {
  return documents.join('\n---\n');
}

export function seedNode(name: string, options: { ready?: 'True' | 'False' | 'Unknown'; unschedulable?: boolean; worker?: boolean } = {}): string {
  const labels = options.worker ? `, labels: {kubernetes.io/hostname: ${name}, node-role.kubernetes.io/worker: ""}` : '';
  return [
    'apiVersion: v1',
    'kind: Node',
    `metadata: {name: ${name}${labels}}`,
    ...(options.unschedulable ? ['spec: {unschedulable: true}'] : []),
    `status: {conditions: [{type: Ready, status: "${options.ready ?? 'True'}"}]}`,
  ].join('\n');
}

/** A controller of `owner.kind` whose pods carry the label app: `app`. */
export function seedController(owner: SeedOwner, namespace: string, app: string): string {
  const template = `{metadata: {labels: {app: ${app}}}, spec: {containers: [{name: c, image: ${app}}]}}`;
  const spec = owner.kind === 'ReplicaSet' ? `{replicas: 1, selector: {matchLabels: {app: ${app}}}, template: ${template}}` : `{selector: {matchLabels: {app: ${app}}}, template: ${template}}`;
  return ['apiVersion: apps/v1', `kind: ${owner.kind}`, `metadata: {name: ${owner.name}, namespace: ${namespace}, uid: ${owner.uid}}`, `spec: ${spec}`].join('\n');
}

export function seedPod(pod: SeedPod): string {
  const metadata = [
    `name: ${pod.name}`,
    `namespace: ${pod.namespace}`,
    ...(pod.app ? [`labels: {app: ${pod.app}}`] : []),
    ...(pod.mirror ? ['annotations: {kubernetes.io/config.mirror: 9f0c}'] : []),
    ...(pod.owner ? [`ownerReferences: [{apiVersion: apps/v1, kind: ${pod.owner.kind}, name: ${pod.owner.name}, uid: ${pod.owner.uid}, controller: true}]`] : []),
  ];
  const spec = [
    `nodeName: ${pod.node}`,
    ...(pod.graceSeconds === undefined ? [] : [`terminationGracePeriodSeconds: ${pod.graceSeconds}`]),
    ...(pod.emptyDir ? ['volumes: [{name: scratch, emptyDir: {}}]'] : []),
    `containers: [{name: c, image: ${pod.app ?? pod.name}}]`,
  ];
  const state = pod.state ?? 'Ready';
  const status = state === 'Ready' ? '{phase: Running, conditions: [{type: Ready, status: "True"}]}' : `{phase: ${state}}`;
  return ['apiVersion: v1', 'kind: Pod', `metadata: {${metadata.join(', ')}}`, `spec: {${spec.join(', ')}}`, `status: ${status}`].join('\n');
}

/** A PodDisruptionBudget over the pods labelled app: `app`; `rule` is e.g. `minAvailable: 1`. */
export function seedBudget(name: string, namespace: string, app: string, rule: string): string {
  return ['apiVersion: policy/v1', 'kind: PodDisruptionBudget', `metadata: {name: ${name}, namespace: ${namespace}}`, `spec: {${rule}, selector: {matchLabels: {app: ${app}}}}`].join('\n');
}
