import { bare, type CodedText, message } from '@ccos/shared/messages';
import { setUnschedulable } from './cordon';
import type { DrainBlockingPod, DrainEvent, DrainFailure, DrainResult, DrainSkippedPod } from './drain';
import { planDrain, type DrainOptions, type DrainPlanPod } from './drain-plan';
import { isStatus, type KubeClient } from './kube-client';

/** How a drain tells its listener what happens; every drain ends with exactly one `done`. */
export interface DrainReport {
  emit(event: DrainEvent): void;
  finish(result: DrainResult): DrainResult;
  fail(failure: DrainFailure, reason: CodedText, blocking?: DrainBlockingPod[]): DrainResult;
}

export function drainReport(onEvent: (event: DrainEvent) => void): DrainReport {
  const emit = (event: DrainEvent): void => {
    try {
      onEvent(event);
    } catch {
      // A listener's failure must not break the drain.
    }
  };
  const finish = (result: DrainResult): DrainResult => {
    emit({ type: 'done', result });
    return result;
  };
  return { emit, finish, fail: (failure, reason, blocking = []) => finish({ ok: false, failure, reason: reason.message, reasonCoded: bare(reason), blocking }) };
}

/** The pods a drain goes on to remove, and the ones it leaves alone. */
export interface DrainTargets {
  readonly remove: DrainPlanPod[];
  readonly skipped: DrainSkippedPod[];
}

/**
 * What every drain does first, as `kubectl drain` does: cordon, classify the node's pods and, if
 * the options do not allow a class, stop with kubectl's list of refused pods (nothing removed, the
 * node stays cordoned); otherwise report the skipped pods. `interruption` names why a failing API
 * call should count as the drain being stopped (cancelled, timed out) rather than an API error.
 */
export async function cordonAndPlan(
  client: KubeClient,
  node: string,
  options: DrainOptions,
  report: DrainReport,
  interruption: () => { failure: DrainFailure; reason: CodedText } | null,
): Promise<DrainTargets | DrainResult> {
  let plan;
  try {
    const cordon = await setUnschedulable(client, node, true, options.signal);
    report.emit({ type: 'cordoned', node, alreadyCordoned: !cordon.changed });
    plan = await planDrain(client, node, options);
  } catch (error) {
    const stopped = interruption();
    if (stopped) {
      return report.fail(stopped.failure, stopped.reason);
    }
    if (isStatus(error, 404)) {
      return report.fail('NODE_NOT_FOUND', message('drain.nodeNotFound', { node }));
    }
    return report.fail('API_ERROR', message('drain.apiError', { error: error instanceof Error ? error.message : String(error) }));
  }
  if (!plan.allowed) {
    return report.fail(
      'REFUSED',
      plan.refusal !== null && plan.refusalCoded !== null ? { ...plan.refusalCoded, message: plan.refusal } : message('drain.unexpected'),
      plan.pods.filter((entry) => entry.action === 'refuse').map((entry) => ({ pod: entry.pod, message: entry.reason, messageCoded: entry.reasonCoded })),
    );
  }
  const skipped = plan.pods.filter((entry) => entry.action === 'skip').map((entry) => ({ pod: entry.pod, reason: entry.reason, reasonCoded: entry.reasonCoded }));
  skipped.forEach((entry) => report.emit({ type: 'pod-skipped', ...entry }));
  return { remove: plan.pods.filter((entry) => entry.action === 'evict'), skipped };
}
