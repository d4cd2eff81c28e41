import type { V1Eviction } from '@kubernetes/client-node';
import pLimit, { type LimitFunction } from 'p-limit';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { SystemClock } from '@ccos/shared/util-timing';
import { cordonAndPlan, drainReport } from './drain-opening';
import type { DrainOptions, DrainPlanPod } from './drain-plan';
import { isStatus, KubeApiError, type KubeClient } from './kube-client';

export { planDrain } from './drain-plan';

/** A coded text as the English words and the code of a pod's state. */
function said(text: CodedText): { message: string; coded: Message } {
  return { message: text.message, coded: bare(text) };
}

/** Why a drain stopped, naming the pods still on the node. */
export function stillOnNode(reason: CodedText, pending: readonly DrainBlockingPod[]): CodedText {
  return message('drain.stillOnNode', { reason: bare(reason), pods: pending.map((p) => p.pod).join(', ') || bare(message('drain.nonePods')) });
}

/** The failures of pods that could not be removed, as one message. */
export function failuresOf(failed: readonly DrainBlockingPod[]): CodedText {
  return message('common.list', { items: failed.map((f) => f.messageCoded ?? bare(message('drain.raw', { text: f.message }))) });
}

/** A pod a drain could not get rid of, and why. */
export interface DrainBlockingPod {
  /** `namespace/name`. */
  pod: string;
  /** The PodDisruptionBudget that refused its eviction, if one did. */
  pdb?: string;
  message: string;
  /** `message` by its code in the message catalogue. */
  messageCoded?: Message;
}

/** A pod a drain left in place on purpose. */
export interface DrainSkippedPod {
  pod: string;
  reason: string;
  /** `reason` by its code in the message catalogue. */
  reasonCoded: Message;
}

/** Why a drain did not finish. */
export type DrainFailure =
  /** Pods of a class the options do not allow (nothing was evicted). */
  | 'REFUSED'
  /** timeoutSeconds passed with pods still there. */
  | 'TIMEOUT'
  /** The Eviction API refused a pod for a reason other than a disruption budget. */
  | 'EVICTION_FAILED'
  /** The caller's AbortSignal fired. */
  | 'CANCELLED'
  /** An option this library does not support (disableEviction) or an invalid value. */
  | 'UNSUPPORTED_OPTION'
  | 'NODE_NOT_FOUND'
  /** The API could not be read or written (network, authorisation, server error). */
  | 'API_ERROR';

/** Outcome of {@link drainNode}; failures are results, not exceptions. */
export type DrainResult =
  | { ok: true; evicted: string[]; skipped: DrainSkippedPod[] }
  | { ok: false; failure: DrainFailure; reason: string; reasonCoded: Message; blocking: DrainBlockingPod[] };

/** Progress of a drain, in the order things happen. */
export type DrainEvent =
  | { type: 'cordoned'; node: string; alreadyCordoned: boolean }
  | { type: 'pod-skipped'; pod: string; reason: string; reasonCoded: Message }
  | { type: 'pod-evicting'; pod: string; attempt: number }
  /** The Eviction API answered 429: a PodDisruptionBudget allows no disruption now; retried after retryInMs. */
  | { type: 'pod-blocked'; pod: string; pdb: string | null; message: string; detail: string | null; coded: Message; retryInMs: number }
  /** The Eviction API accepted the eviction; the pod is terminating. */
  | { type: 'pod-evicted'; pod: string }
  /** Deleted past the PodDisruptionBudget that held it (bypassBudgets); the pod is terminating. */
  | { type: 'pod-deleted-past-budget'; pod: string; pdb: string | null }
  /** The pod is gone (404, or a new pod of the same name has another UID). */
  | { type: 'pod-deleted'; pod: string }
  | { type: 'pod-failed'; pod: string; message: string; coded: Message }
  | { type: 'timeout'; pending: DrainBlockingPod[] }
  | { type: 'done'; result: DrainResult };

const DEFAULT_CONCURRENCY = 10;
const DEFAULT_RETRY_INTERVAL_MS = 5000;
const DEFAULT_POLL_INTERVAL_MS = 1000;

/** The budget named in a 429's DisruptionBudget cause ("The disruption budget <name> needs ..."). */
function budgetNamed(error: KubeApiError): { pdb: string | null; detail: string | null } {
  const cause = error.status?.details?.causes?.find((entry) => entry.reason === 'DisruptionBudget') ?? error.status?.details?.causes?.[0];
  const detail = cause?.message ?? null;
  const match = detail ? /The disruption budget (\S+) /.exec(detail) : null;
  return { pdb: match ? match[1] : null, detail };
}

/**
 * The 429 answer of the Eviction API by its code in the message catalogue: the API server's
 * known sentences (its status message and the budget's cause) are coded, anything else stays raw.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/core/pod/storage/eviction.go
 */
export function blockedMessage(statusMessage: string | undefined, detail: string | null): Message {
  const parts: Message[] = [];
  if (statusMessage) {
    parts.push(bare(statusMessage === "Cannot evict pod as it would violate the pod's disruption budget." ? message('drain.violatesBudget') : message('drain.raw', { text: statusMessage })));
  }
  if (detail) {
    const needs = /^The disruption budget (\S+) needs (\d+) healthy pods and has (\d+) currently$/.exec(detail);
    parts.push(bare(needs ? message('drain.budgetNeeds', { pdb: needs[1], needed: Number(needs[2]), current: Number(needs[3]) }) : message('drain.raw', { text: detail })));
  }
  return parts.length === 2 ? bare(message('drain.twoSentences', { first: parts[0], second: parts[1] })) : parts[0];
}

function invalidOption(options: DrainOptions): CodedText | null {
  if (options.disableEviction) {
    return message('drain.option.disableEviction');
  }
  const integer = (value: number | undefined, min: number): boolean => value === undefined || (Number.isInteger(value) && value >= min);
  if (!integer(options.gracePeriodSeconds, -1)) {
    return message('drain.option.gracePeriod');
  }
  if (!integer(options.timeoutSeconds, 0) || !integer(options.skipWaitForDeleteTimeoutSeconds, 0)) {
    return message('drain.option.timeouts');
  }
  if (!integer(options.evictionConcurrency, 1)) {
    return message('drain.option.concurrency');
  }
  if (!integer(options.retryIntervalMs, 0) || !integer(options.pollIntervalMs, 1)) {
    return message('drain.option.intervals');
  }
  return null;
}

/** State of one pod being evicted. */
interface Eviction {
  entry: DrainPlanPod;
  uid: string;
  state: 'pending' | 'terminating' | 'gone' | 'failed';
  pdb?: string;
  message: string;
  coded: Message;
}

/**
 * Drains a node with the semantics of `kubectl drain`: cordon; classify the node's pods (see
 * {@link planDrain}) and, if the options do not allow a class, stop with kubectl's list of
 * refused pods (nothing evicted, the node stays cordoned, as kubectl leaves it); otherwise evict
 * through the Eviction API (policy/v1) all pods in parallel with at most `evictionConcurrency`
 * requests in flight, retrying evictions a PodDisruptionBudget refuses (429) every
 * `retryIntervalMs`, and wait for each pod to be gone (404 or another UID). Never throws for what
 * the user must see: every outcome is a {@link DrainResult}, also sent as the `done` event.
 * @see https://github.com/kubernetes/kubectl/blob/master/pkg/drain/drain.go
 * @see https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/
 * @see https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
 */
export async function drainNode(client: KubeClient, node: string, options: DrainOptions = {}, onEvent: (event: DrainEvent) => void = () => undefined): Promise<DrainResult> {
  const report = drainReport(onEvent);
  const { emit, finish, fail } = report;

  const invalid = invalidOption(options);
  if (invalid) {
    return fail('UNSUPPORTED_OPTION', invalid);
  }
  const timeoutSeconds = options.timeoutSeconds ?? 0;
  const deadline = new AbortController();
  // The timer is the (injectable) clock's: a drain's timeout runs on virtual time in tests.
  const finished = new AbortController();
  if (timeoutSeconds > 0) {
    void (options.clock ?? new SystemClock()).sleep(timeoutSeconds * 1000, finished.signal).then(() => {
      if (!finished.signal.aborted) {
        deadline.abort();
      }
    });
  }
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  const stopped = (): DrainFailure | null => (options.signal?.aborted ? 'CANCELLED' : deadline.signal.aborted ? 'TIMEOUT' : null);
  const stoppedReason = (failure: DrainFailure): CodedText => (failure === 'CANCELLED' ? message('removal.drainCancelled') : message('drain.timedOut', { seconds: String(timeoutSeconds) }));

  try {
    const opened = await cordonAndPlan(client, node, { ...options, signal }, report, () => {
      const why = stopped();
      return why ? { failure: why, reason: stoppedReason(why) } : null;
    });
    if (!('remove' in opened)) {
      return opened;
    }
    const { remove, skipped } = opened;

    const limit = pLimit(options.evictionConcurrency ?? DEFAULT_CONCURRENCY);
    const evictions: Eviction[] = remove.map((entry) => ({ entry, uid: entry.uid, state: 'pending', pdb: entry.pdbs[0], ...said(message('drain.notEvictedYet')) }));
    await Promise.all(evictions.map((eviction) => evictAndWait(client, eviction, options, signal, limit, emit)));

    const leftover = (states: Eviction['state'][]): DrainBlockingPod[] =>
      evictions.filter((e) => states.includes(e.state)).map((e) => ({ pod: e.entry.pod, ...(e.pdb ? { pdb: e.pdb } : {}), message: e.message, messageCoded: e.coded }));
    const why = stopped();
    if (why) {
      const pending = leftover(['pending', 'terminating']);
      if (why === 'TIMEOUT') {
        emit({ type: 'timeout', pending });
      }
      return fail(why, stillOnNode(stoppedReason(why), pending), pending);
    }
    const failed = leftover(['failed']);
    if (failed.length > 0) {
      return fail('EVICTION_FAILED', failuresOf(failed), failed);
    }
    return finish({ ok: true, evicted: evictions.map((e) => e.entry.pod), skipped });
  } finally {
    finished.abort();
  }
}

/** Deletes a pod a budget holds (its UID as a precondition, so a replacement of the same name is not touched). */
async function deletePastBudget(client: KubeClient, eviction: Eviction, grace: number, signal: AbortSignal, limit: LimitFunction): Promise<'DELETED' | 'GONE' | 'RETRY'> {
  const { pod, namespace, name } = eviction.entry;
  try {
    await limit(() =>
      client.call(`delete pod ${pod}`, (callOptions) => client.core.deleteNamespacedPod({ name, namespace, body: { ...(grace >= 0 ? { gracePeriodSeconds: grace } : {}), preconditions: { uid: eviction.uid } } }, callOptions), signal),
    );
    return 'DELETED';
  } catch (error) {
    return isStatus(error, 404) ? 'GONE' : 'RETRY';
  }
}

/** One pod: evict until accepted (retrying 429s), then poll until it is gone. Ends early when `signal` aborts. */
async function evictAndWait(client: KubeClient, eviction: Eviction, options: DrainOptions, signal: AbortSignal, limit: LimitFunction, emit: (event: DrainEvent) => void): Promise<void> {
  const { pod, namespace, name } = eviction.entry;
  const retryIntervalMs = options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const grace = options.gracePeriodSeconds ?? -1;
  const body: V1Eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: grace >= 0 ? { gracePeriodSeconds: grace } : {} };
  const clock = options.clock ?? new SystemClock();
  const sleep = (ms: number): Promise<void> => clock.sleep(ms, signal);
  const gone = (): void => {
    eviction.state = 'gone';
    Object.assign(eviction, said(message('drain.deleted')));
    emit({ type: 'pod-deleted', pod });
  };
  let deleting = false;
  let forced = false;

  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      await limit(() => {
        // Reported once a slot is free, so "evicting" means the request is on its way.
        emit({ type: 'pod-evicting', pod, attempt });
        return client.call(`evict pod ${pod}`, (callOptions) => client.core.createNamespacedPodEviction({ name, namespace, body }, callOptions), signal);
      });
      break;
    } catch (error) {
      if (signal.aborted) {
        return;
      }
      if (isStatus(error, 404)) {
        gone();
        return;
      }
      const terminatingNamespace = isStatus(error, 403) && (error.status?.details?.causes ?? []).some((cause) => cause.reason === 'NamespaceTerminating');
      if (terminatingNamespace && deleting) {
        // The namespace's deletion is removing the pod anyway; wait for it.
        break;
      }
      if (!(error instanceof KubeApiError) || !(isStatus(error, 429) || terminatingNamespace)) {
        eviction.state = 'failed';
        eviction.message = error instanceof Error ? error.message : String(error);
        eviction.coded = bare(message('drain.evictionFailed', { error: eviction.message }));
        emit({ type: 'pod-failed', pod, message: eviction.message, coded: eviction.coded });
        return;
      }
      const { pdb, detail } = budgetNamed(error);
      eviction.pdb = pdb ?? eviction.pdb;
      eviction.message = [error.status?.message, detail].filter(Boolean).join(' ') || error.message;
      eviction.coded = error.status?.message || detail ? blockedMessage(error.status?.message, detail) : bare(message('drain.raw', { text: error.message }));
      emit({ type: 'pod-blocked', pod, pdb: pdb ?? eviction.pdb ?? null, message: error.status?.message ?? error.message, detail, coded: eviction.coded, retryInMs: retryIntervalMs });
      await clock.sleep(retryIntervalMs, options.bypassBudgets ? AbortSignal.any([signal, options.bypassBudgets]) : signal);
      if (options.bypassBudgets?.aborted && !signal.aborted) {
        const deleted = await deletePastBudget(client, eviction, grace, signal, limit);
        if (deleted === 'GONE') {
          gone();
          return;
        }
        if (deleted === 'DELETED') {
          forced = true;
          emit({ type: 'pod-deleted-past-budget', pod, pdb: eviction.pdb ?? null });
          break;
        }
        await sleep(retryIntervalMs);
        continue;
      }
      // Like kubectl, evict the fresh pod next time; errors here are left to the eviction to sort out.
      try {
        const fresh = await limit(() => client.call(`read pod ${pod}`, (callOptions) => client.core.readNamespacedPod({ name, namespace }, callOptions), signal));
        eviction.uid = fresh.metadata?.uid ?? eviction.uid;
        deleting = fresh.metadata?.deletionTimestamp != null;
      } catch {
        // The next eviction answers 404 if the pod is gone.
      }
    }
  }
  if (signal.aborted) {
    return;
  }
  eviction.state = 'terminating';
  eviction.pdb = undefined;
  Object.assign(eviction, said(message('drain.terminatingAfterEviction')));
  if (!forced) {
    emit({ type: 'pod-evicted', pod });
  }

  while (!signal.aborted) {
    try {
      const current = await limit(() => client.call(`read pod ${pod}`, (callOptions) => client.core.readNamespacedPod({ name, namespace }, callOptions), signal));
      if (current.metadata?.uid !== eviction.uid) {
        gone();
        return;
      }
    } catch (error) {
      if (signal.aborted) {
        return;
      }
      if (isStatus(error, 404)) {
        gone();
        return;
      }
      if (error instanceof KubeApiError && error.kind === 'status') {
        eviction.state = 'failed';
        Object.assign(eviction, said(message('drain.terminationFailed', { error: error.message })));
        emit({ type: 'pod-failed', pod, message: eviction.message, coded: eviction.coded });
        return;
      }
      // Network trouble: keep polling until the deadline.
    }
    await sleep(pollIntervalMs);
  }
}
