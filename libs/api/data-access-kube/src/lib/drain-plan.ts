import type { V1OwnerReference, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { bare, type CodedText, type Message, type MessageCode, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';
import { listAll } from './informer';
import { KubeApiError, type KubeClient } from './kube-client';
import { selectorMatches } from './label-selector';

/** A coded message as a filter's text and code. */
function codedText(text: CodedText): { message: string; coded: Message } {
  return { message: text.message, coded: bare(text) };
}

/** Options of a drain; the names follow `kubectl drain`'s flags. */
export interface DrainOptions {
  /** Also evict pods without a controller, and pods of a DaemonSet that no longer exists (`--force`). */
  force?: boolean;
  /** Also evict pods with emptyDir volumes, whose data is lost (`--delete-emptydir-data`). */
  deleteEmptyDirData?: boolean;
  /** Leave DaemonSet pods in place instead of refusing the drain (`--ignore-daemonsets`). */
  ignoreDaemonSets?: boolean;
  /** Grace period given to each pod; -1 (default) uses the pod's own (`--grace-period`). */
  gracePeriodSeconds?: number;
  /** Give up after this long; 0 (default) waits forever (`--timeout`). Covers the whole drain. */
  timeoutSeconds?: number;
  /** Eviction API requests in flight at once (kubectl has no bound). Default 10. */
  evictionConcurrency?: number;
  /** Wait before retrying an eviction a PodDisruptionBudget refused (429). Default 5000, like kubectl. */
  retryIntervalMs?: number;
  /** Interval of the "is the pod gone yet" check after an eviction. Default 1000, like kubectl. */
  pollIntervalMs?: number;
  /** Skip pods whose deletion started more than this many seconds ago; 0 (default) skips none (`--skip-wait-for-delete-timeout`). */
  skipWaitForDeleteTimeoutSeconds?: number;
  /**
   * `kubectl drain --disable-eviction` deletes pods instead, bypassing PodDisruptionBudgets. Not
   * supported: a drain with it set is refused, never silently turned into evictions.
   */
  disableEviction?: boolean;
  /**
   * Once aborted, a pod a PodDisruptionBudget keeps refusing is deleted instead of evicted (what
   * `--disable-eviction` does, for the held pods only): an operator's decision to go past the budget.
   */
  bypassBudgets?: AbortSignal;
  /** Cancels the drain (the node stays cordoned). */
  signal?: AbortSignal;
  /** Paces the timeout, eviction retries and polls; tests pass a virtual one. Default: the process's clock. */
  clock?: Clock;
}

/** Why a pod is evicted, skipped or refused (the deciding one of kubectl's filters). */
export type DrainPodClass =
  /** Deletion started longer ago than skipWaitForDeleteTimeoutSeconds. */
  | 'terminating'
  /** Owned by an existing DaemonSet: never evicted. */
  | 'daemonset'
  /** Owned by a DaemonSet that no longer exists: evicted only with force. */
  | 'orphaned-daemonset'
  /** A static pod's mirror (annotation kubernetes.io/config.mirror): skipped silently. */
  | 'mirror'
  /** Has emptyDir volumes: evicted only with deleteEmptyDirData. */
  | 'local-storage'
  /** No controller ownerReference: evicted only with force. */
  | 'unmanaged'
  /** Succeeded or Failed: always evicted. */
  | 'finished'
  /** Has a controller that will replace it: evicted. */
  | 'managed';

export type DrainAction = 'evict' | 'skip' | 'refuse';

/** The options that make a drain delete pods it otherwise refuses to: a pod's data or its only copy is lost. */
export type ForcefulDrainOption = 'force' | 'deleteEmptyDirData';

/** One pod of the node and what a drain does with it. */
export interface DrainPlanPod {
  /** `namespace/name`. */
  pod: string;
  namespace: string;
  name: string;
  uid: string;
  class: DrainPodClass;
  action: DrainAction;
  /** kubectl's words for the decision (its error or warning text), or what owns the pod. */
  reason: string;
  /** `reason` by its code in the message catalogue. */
  reasonCoded: Message;
  /** `Kind/name` of the controller, if any. */
  controller: string | null;
  /** PodDisruptionBudgets covering the pod (more than one makes the Eviction API fail). */
  pdbs: string[];
  /**
   * The forceful options under which the drain deletes this pod, whatever the options asked
   * about: empty when it is evicted without them, or kept whatever they say (a DaemonSet's, a mirror).
   * Both when it needs both (no controller, and emptyDir volumes).
   */
  deletedWith: ForcefulDrainOption[];
}

/** A PodDisruptionBudget that covers pods to be evicted. */
export interface DrainPlanBudget {
  namespace: string;
  name: string;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  /** `namespace/name` of the covered pods to be evicted. */
  pods: string[];
}

/** What a drain of a node would do. */
export interface DrainPlan {
  node: string;
  pods: DrainPlanPod[];
  budgets: DrainPlanBudget[];
  /** kubectl's warning lines, e.g. `ignoring DaemonSet-managed Pods: kube-system/agent-x`. */
  warnings: string[];
  /** `warnings` by their codes in the message catalogue. */
  warningsCoded: Message[];
  /** kubectl's error lines, e.g. `cannot delete Pods that declare no controller (use --force to override): default/x`. */
  refusals: string[];
  /** `refusals` by their codes in the message catalogue. */
  refusalsCoded: Message[];
  /** No refusals: the drain may evict. */
  allowed: boolean;
  /** The refusals as one message, worded like kubectl's; null when allowed. */
  refusal: string | null;
  /** `refusal` by its code in the message catalogue. */
  refusalCoded: Message | null;
}

// kubectl's texts, verbatim, so an operator recognises them (k8s.io/kubectl/pkg/drain/filters.go).
export const DAEMONSET_FATAL = 'DaemonSet-managed Pods (use --ignore-daemonsets to ignore)';
export const DAEMONSET_WARNING = 'ignoring DaemonSet-managed Pods';
export const LOCAL_STORAGE_FATAL = 'Pods with local storage (use --delete-emptydir-data to override)';
export const LOCAL_STORAGE_WARNING = 'deleting Pods with local storage';
export const UNMANAGED_FATAL = 'Pods that declare no controller (use --force to override)';
export const UNMANAGED_WARNING = 'deleting Pods that declare no controller';
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** One filter's verdict, as kubectl's PodDeleteStatus. */
export interface FilterStatus {
  delete: boolean;
  kind: 'okay' | 'skip' | 'warning' | 'error';
  message?: string;
  /** `message` by its code in the message catalogue. */
  coded?: Message;
  class?: DrainPodClass;
}

/** kubectl's texts by their codes, so they can be shown in the operator's language. */
const KUBECTL_CODES: Readonly<Record<string, MessageCode>> = {
  [DAEMONSET_FATAL]: 'drain.daemonSetFatal',
  [DAEMONSET_WARNING]: 'drain.daemonSetWarning',
  [LOCAL_STORAGE_FATAL]: 'drain.localStorageFatal',
  [LOCAL_STORAGE_WARNING]: 'drain.localStorageWarning',
  [UNMANAGED_FATAL]: 'drain.unmanagedFatal',
  [UNMANAGED_WARNING]: 'drain.unmanagedWarning',
};

/** A filter's kubectl text with its code. */
function kubectlText(text: string): { message: string; coded: Message } {
  const code = KUBECTL_CODES[text];
  return { message: text, coded: code ? { code, params: {} } : bare(message('drain.raw', { text })) };
}

const OKAY: FilterStatus = { delete: true, kind: 'okay' };

/** Order in which refusal lines are listed (kubectl's order is a Go map's, i.e. random). */
const REFUSAL_ORDER = [DAEMONSET_FATAL, LOCAL_STORAGE_FATAL, UNMANAGED_FATAL];

export const podRef = (pod: V1Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

/** The controller ownerReference (controller: true), as metav1.GetControllerOf. */
export function controllerOf(pod: V1Pod): V1OwnerReference | null {
  return pod.metadata?.ownerReferences?.find((ref) => ref.controller === true) ?? null;
}

export function isFinished(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function deletionStartedMs(pod: V1Pod): number | null {
  const value: unknown = pod.metadata?.deletionTimestamp;
  const time = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(time) ? null : time;
}

/**
 * Lists the pods bound to a node, following `continue` like kubectl (pages of 500).
 * @see https://github.com/kubernetes/kubectl/blob/master/pkg/drain/drain.go
 */
export async function listPodsOnNode(client: KubeClient, node: string, signal?: AbortSignal): Promise<V1Pod[]> {
  const { items } = await listAll(client, `list pods on node ${node}`, (page, options) => client.core.listPodForAllNamespaces({ ...page, fieldSelector: `spec.nodeName=${node}` }, options), signal);
  return items;
}

async function listBudgets(client: KubeClient, signal?: AbortSignal): Promise<V1PodDisruptionBudget[]> {
  const { items } = await listAll(client, 'list poddisruptionbudgets', (page, options) => client.policy.listPodDisruptionBudgetForAllNamespaces(page, options), signal);
  return items;
}

function groupLines(entries: Array<{ message: string; coded: Message; pod: string }>, order: readonly string[], line: 'drain.cannotDelete' | 'drain.warningLine'): CodedText[] {
  const groups = new Map<string, { coded: Message; pods: string[] }>();
  const ranked = [...entries].sort((a, b) => rank(order, a.message) - rank(order, b.message));
  for (const { message: text, coded, pod } of ranked) {
    const group = groups.get(text) ?? { coded, pods: [] };
    group.pods.push(pod);
    groups.set(text, group);
  }
  return [...groups.values()].map(({ coded, pods }) => message(line, { what: coded, pods: pods.join(', ') }));
}

function rank(order: readonly string[], message: string): number {
  const index = order.indexOf(message);
  return index === -1 ? order.length : index;
}

/** One message for a refused drain, worded like kubectl's (`[a, b]` when there are several). */
export function refusalMessage(node: string, refusals: readonly string[]): string {
  const detail = refusals.length === 1 ? refusals[0] : `[${refusals.join(', ')}]`;
  return `unable to drain node "${node}" due to error: ${detail}`;
}

/** {@link refusalMessage} by its code in the message catalogue. */
export function refusalCoded(node: string, refusals: readonly Message[]): Message {
  const detail = refusals.length === 1 ? refusals[0] : bare(message('drain.refusalList', { items: [...refusals] }));
  return bare(message('drain.refused', { node, detail }));
}

/**
 * Decides, for every pod on a node, what `kubectl drain` with the same options would do, running
 * kubectl's filters in its order (already deleted, DaemonSet, mirror, local storage, unmanaged;
 * finished pods pass) and stopping at the first that keeps a pod. Also lists the
 * PodDisruptionBudgets covering the pods to be evicted. Reads only. Throws KubeApiError when the
 * API cannot be read.
 * @see https://github.com/kubernetes/kubectl/blob/master/pkg/drain/filters.go
 * @see https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
 */
export async function planDrain(client: KubeClient, node: string, options: DrainOptions = {}): Promise<DrainPlan> {
  return classifyPods(client, node, await listPodsOnNode(client, node, options.signal), options);
}

/** One of kubectl's drain filters: what it says about one pod. */
export type DrainFilter = (pod: V1Pod) => FilterStatus | Promise<FilterStatus>;

/** Whether a pod's DaemonSet exists: null when it does, else the API's answer (404 when it is gone). */
export type DaemonSetLookup = (namespace: string, name: string) => Promise<KubeApiError | null>;

/** A filter's warning, in English and by its code. */
export type FilterWarning = { message: string; coded: Message };

/** What the filters, run in order, decided about one pod. */
export interface FilterVerdict {
  /** The verdict of the filter that kept the pod, or OKAY when every filter let it go. */
  status: FilterStatus;
  podClass: DrainPodClass | undefined;
  /** Warnings of the filters that let it go. */
  warnings: FilterWarning[];
}

/** A pod of the plan with the warnings its filters gave (they become the plan's warning lines). */
export type PlannedPod = DrainPlanPod & { warnings: FilterWarning[] };

/** Reads each DaemonSet once per plan, however many of its pods the node runs. */
export function daemonSetLookup(client: KubeClient, signal?: AbortSignal): DaemonSetLookup {
  const daemonSets = new Map<string, Promise<KubeApiError | null>>();
  return (namespace: string, name: string): Promise<KubeApiError | null> => {
    const key = `${namespace}/${name}`;
    let lookup = daemonSets.get(key);
    if (!lookup) {
      lookup = client.call(`read daemonset ${key}`, (callOptions) => client.apps.readNamespacedDaemonSet({ name, namespace }, callOptions), signal).then(
        () => null,
        (error: unknown) => {
          if (error instanceof KubeApiError && error.kind === 'status') {
            return error;
          }
          throw error;
        },
      );
      daemonSets.set(key, lookup);
    }
    return lookup;
  };
}

/** kubectl's filters in its order (already deleted, DaemonSet, mirror, local storage, unmanaged), for these options. */
export function drainFilters(options: DrainOptions, daemonSetLookup: DaemonSetLookup, now: () => number = Date.now): DrainFilter[] {
  const skipDeleted = (pod: V1Pod): FilterStatus => {
    const limit = options.skipWaitForDeleteTimeoutSeconds ?? 0;
    const started = deletionStartedMs(pod);
    if (limit > 0 && started !== null && Math.floor((now() - started) / 1000) > limit) {
      return { delete: false, kind: 'skip', ...codedText(message('drain.terminating', { limit: String(limit) })), class: 'terminating' };
    }
    return OKAY;
  };

  const daemonSet = async (pod: V1Pod): Promise<FilterStatus> => {
    const ref = controllerOf(pod);
    if (!ref || ref.kind !== 'DaemonSet' || ref.apiVersion !== 'apps/v1' || isFinished(pod)) {
      return OKAY;
    }
    const missing = await daemonSetLookup(pod.metadata?.namespace ?? '', ref.name);
    if (missing) {
      const text = missing.status?.message ?? `daemonsets.apps "${ref.name}" not found`;
      const said = { message: text, coded: bare(missing.statusCode === 404 ? message('drain.daemonSetNotFound', { name: ref.name }) : message('drain.raw', { text })) };
      if (missing.statusCode === 404 && options.force) {
        return { delete: true, kind: 'warning', ...said, class: 'orphaned-daemonset' };
      }
      return { delete: false, kind: 'error', ...said, class: missing.statusCode === 404 ? 'orphaned-daemonset' : 'daemonset' };
    }
    return options.ignoreDaemonSets
      ? { delete: false, kind: 'warning', ...kubectlText(DAEMONSET_WARNING), class: 'daemonset' }
      : { delete: false, kind: 'error', ...kubectlText(DAEMONSET_FATAL), class: 'daemonset' };
  };

  const mirror = (pod: V1Pod): FilterStatus =>
    pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined ? { delete: false, kind: 'skip', ...codedText(message('drain.mirror')), class: 'mirror' } : OKAY;

  const localStorage = (pod: V1Pod): FilterStatus => {
    if (!(pod.spec?.volumes ?? []).some((volume) => volume.emptyDir) || isFinished(pod)) {
      return OKAY;
    }
    return options.deleteEmptyDirData
      ? { delete: true, kind: 'warning', ...kubectlText(LOCAL_STORAGE_WARNING), class: 'local-storage' }
      : { delete: false, kind: 'error', ...kubectlText(LOCAL_STORAGE_FATAL), class: 'local-storage' };
  };

  const unreplicated = (pod: V1Pod): FilterStatus => {
    if (isFinished(pod) || controllerOf(pod)) {
      return OKAY;
    }
    return options.force
      ? { delete: true, kind: 'warning', ...kubectlText(UNMANAGED_WARNING), class: 'unmanaged' }
      : { delete: false, kind: 'error', ...kubectlText(UNMANAGED_FATAL), class: 'unmanaged' };
  };

  return [skipDeleted, daemonSet, mirror, localStorage, unreplicated];
}

/**
 * Which forceful options a pod's deletion needs, from kubectl's filters run with both on: the
 * options whose filter let it go only because of them. Empty when it is deleted without them or
 * kept even with them.
 */
export async function forcefulOptionsFor(pod: V1Pod, forcefulFilters: readonly DrainFilter[]): Promise<ForcefulDrainOption[]> {
  const needed = new Set<ForcefulDrainOption>();
  for (const filter of forcefulFilters) {
    const status = await filter(pod);
    if (!status.delete) {
      return [];
    }
    if (status.kind === 'warning' && status.class === 'local-storage') {
      needed.add('deleteEmptyDirData');
    } else if (status.kind === 'warning' && (status.class === 'unmanaged' || status.class === 'orphaned-daemonset')) {
      needed.add('force');
    }
  }
  return (['force', 'deleteEmptyDirData'] as const).filter((option) => needed.has(option));
}

/** Runs the filters in order on one pod, stopping at the first that keeps it. */
export async function runFilters(pod: V1Pod, filters: readonly DrainFilter[]): Promise<FilterVerdict> {
  let status = OKAY;
  let podClass: DrainPodClass | undefined;
  const warnings: FilterWarning[] = [];
  for (const filter of filters) {
    status = await filter(pod);
    podClass = status.class ?? podClass;
    if (status.kind === 'warning' && status.message) {
      warnings.push({ message: status.message, coded: status.coded ?? bare(message('drain.raw', { text: status.message })) });
    }
    if (!status.delete) {
      break;
    }
  }
  return { status, podClass, warnings };
}

/** {@link planDrain} for pods already listed: filters every pod, finds the budgets of those to evict, and words the plan. */
export async function classifyPods(client: KubeClient, node: string, pods: readonly V1Pod[], options: DrainOptions = {}): Promise<DrainPlan> {
  const lookup = daemonSetLookup(client, options.signal);
  const filters = drainFilters(options, lookup);
  // The same filters with both forceful options on: what each of them would delete, shown before it is chosen.
  const forceful = drainFilters({ ...options, force: true, deleteEmptyDirData: true }, lookup);
  const planned = await Promise.all(
    pods.map(async (pod): Promise<PlannedPod> => {
      const { status, podClass, warnings } = await runFilters(pod, filters);
      const deletedWith = await forcefulOptionsFor(pod, forceful);
      const controller = controllerOf(pod);
      const action: DrainAction = status.delete ? 'evict' : status.kind === 'error' ? 'refuse' : 'skip';
      const ownerText = controller ? `${controller.kind}/${controller.name}` : null;
      const fallbackReason = isFinished(pod) ? `${pod.status?.phase} pod` : ownerText ? `managed by ${ownerText}` : '';
      const fallbackCoded = bare(isFinished(pod) ? message('drain.finished', { phase: pod.status?.phase ?? '' }) : ownerText ? message('drain.managedBy', { controller: ownerText }) : message('drain.raw', { text: '' }));
      const reason = action === 'evict' ? warnings.map((warning) => warning.message).join('; ') || fallbackReason : (status.message ?? '');
      return {
        pod: podRef(pod),
        namespace: pod.metadata?.namespace ?? '',
        name: pod.metadata?.name ?? '',
        uid: pod.metadata?.uid ?? '',
        class: podClass ?? (isFinished(pod) ? 'finished' : 'managed'),
        action,
        reason,
        reasonCoded:
          action === 'evict'
            ? warnings.length > 0 ? bare(message('common.list', { items: warnings.map((warning) => warning.coded) })) : fallbackCoded
            : status.coded ?? bare(message('drain.raw', { text: reason })),
        controller: ownerText,
        pdbs: [],
        deletedWith,
        warnings,
      };
    }),
  );

  const evicting = planned.filter((entry) => entry.action === 'evict');
  const budgets = evicting.length > 0 ? coveringBudgets(evicting, pods, await listBudgets(client, options.signal)) : [];
  return summarizePlan(node, planned, budgets);
}

/** The budgets whose selector covers pods to be evicted (in their namespace); notes each budget on its pods. */
export function coveringBudgets(evicting: readonly DrainPlanPod[], pods: readonly V1Pod[], pdbs: readonly V1PodDisruptionBudget[]): DrainPlanBudget[] {
  const budgets: DrainPlanBudget[] = [];
  const byRef = new Map(pods.map((pod) => [podRef(pod), pod]));
  for (const pdb of pdbs) {
    const namespace = pdb.metadata?.namespace ?? '';
    const covered = evicting.filter((entry) => entry.namespace === namespace && selectorMatches(pdb.spec?.selector, byRef.get(entry.pod)?.metadata?.labels));
    if (covered.length === 0) {
      continue;
    }
    const name = pdb.metadata?.name ?? '';
    covered.forEach((entry) => entry.pdbs.push(name));
    budgets.push({
      namespace,
      name,
      disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
      currentHealthy: pdb.status?.currentHealthy ?? 0,
      desiredHealthy: pdb.status?.desiredHealthy ?? 0,
      pods: covered.map((entry) => entry.pod),
    });
  }
  return budgets;
}

/** The plan in kubectl's words and by code: refusal lines (refused pods), warning lines (the others), and whether the drain may go ahead. */
export function summarizePlan(node: string, planned: readonly PlannedPod[], budgets: DrainPlanBudget[]): DrainPlan {
  const refusals = groupLines(
    planned
      .filter((entry) => entry.action === 'refuse')
      .map((entry) => (entry.reason ? { message: entry.reason, coded: entry.reasonCoded, pod: entry.pod } : { message: 'unexpected error', coded: bare(message('drain.unexpected')), pod: entry.pod })),
    REFUSAL_ORDER,
    'drain.cannotDelete',
  );
  const warnings = groupLines(
    planned.flatMap((entry) => (entry.action === 'refuse' ? [] : entry.warnings.map((warning) => ({ ...warning, pod: entry.pod })))),
    [DAEMONSET_WARNING, LOCAL_STORAGE_WARNING, UNMANAGED_WARNING],
    'drain.warningLine',
  );
  return {
    node,
    pods: planned.map(({ warnings: _warnings, ...entry }) => entry),
    budgets,
    warnings: warnings.map((line) => line.message),
    warningsCoded: warnings.map(bare),
    refusals: refusals.map((line) => line.message),
    refusalsCoded: refusals.map(bare),
    allowed: refusals.length === 0,
    refusal: refusals.length === 0 ? null : refusalMessage(node, refusals.map((line) => line.message)),
    refusalCoded: refusals.length === 0 ? null : refusalCoded(node, refusals.map(bare)),
  };
}
