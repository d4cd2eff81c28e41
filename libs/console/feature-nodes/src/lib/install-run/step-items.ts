import { type InstallRunView, type StepEventView, eventsByGroup } from '@ccos/console/data-access';
import type { StepItem, StepItemLink, StepItemState } from '@ccos/console/ui';
import type { I18n, Translate } from '@ccos/console/util-i18n';
import { INSTALL_STEPS, type InstallStep, describeStep, stepIndex } from '@ccos/shared/domain';
import type { nodesMessages } from '../nodes.messages';

type NodesTranslate = Translate<(typeof nodesMessages)['en']>;

export function stepTitle(step: InstallStep, i18n: I18n): string {
  const { title } = describeStep(step);
  return i18n.server(title.code, title.params, title.message);
}

/** The CSR names a START_KUBELET message waits for (`agent.kubelet.waitingCsrs` names them in its parameters). */
export function csrNamesIn(summary: { readonly messageCode?: string | null; readonly messageParams?: unknown } | null | undefined): readonly string[] {
  if (summary?.messageCode !== 'agent.kubelet.waitingCsrs') {
    return [];
  }
  const csrs = (summary.messageParams as { csrs?: unknown } | null)?.['csrs'];
  return typeof csrs === 'string' && csrs !== '' ? csrs.split(', ') : [];
}

/** The agent's own hint in the last FAILED event of a step's events, if it gave one, in the current language. */
function agentHintOf(stepEvents: readonly StepEventView[], i18n: I18n): string | null {
  const failed = stepEvents.findLast((event) => event.status === 'FAILED');
  const hint = failed?.detail?.['hint'];
  const code = failed?.detail?.['hintCode'];
  const text = i18n.server(typeof code === 'string' ? code : null, failed?.detail?.['hintParams'], typeof hint === 'string' ? hint : null);
  return text.trim() ? text : null;
}

interface StepItemsContext {
  readonly t: NodesTranslate;
  readonly i18n: I18n;
  readonly clusterId: string;
  /** Now, for the running step's elapsed time. */
  readonly now: number;
}

/**
 * The six steps of a run, in catalogue order, as the stepper shows them. Steps before the
 * run's start step succeeded in an earlier run; a step still RUNNING in a run that ended
 * was interrupted.
 */
export function stepItems(run: InstallRunView, events: readonly StepEventView[], context: StepItemsContext): StepItem[] {
  const { t, i18n } = context;
  const first = stepIndex(run.startStep);
  const eventsByStep = eventsByGroup(events, (event) => event.step);
  return INSTALL_STEPS.map((step) => {
    const summary = run.steps.find((entry) => entry.step === step);
    const status = summary?.status ?? 'PENDING';
    let state: StepItemState;
    if (status === 'PENDING') {
      // Before a retry's first step, or left out of an apply run: as an earlier run left it.
      state = (run.onlySteps ? !run.onlySteps.includes(step) : stepIndex(step) < first) ? 'skipped' : 'pending';
    } else if (status === 'RUNNING') {
      state = run.status === 'RUNNING' ? 'running' : 'failed';
    } else {
      state = status === 'SUCCEEDED' ? 'succeeded' : 'failed';
    }
    const interrupted = status === 'RUNNING' && state === 'failed';
    // A cancelled run's last step "failed" because the operator stopped it: no fix to suggest.
    const cancelled = run.status === 'CANCELLED' && state === 'failed';
    const title = stepTitle(step, i18n);
    const links: StepItemLink[] =
      step === 'START_KUBELET' && state === 'running'
        ? csrNamesIn(summary).map((name) => ({ label: t('step.reviewCsr', { name }), commands: ['/clusters', context.clusterId, 'csrs'], queryParams: { csr: name } }))
        : [];
    const agentHint = state === 'failed' ? agentHintOf(eventsByStep.get(step) ?? [], i18n) : null;
    return {
      id: step,
      title,
      state,
      stateLabel: cancelled ? t('stepState.CANCELLED') : interrupted ? t('stepState.INTERRUPTED') : state === 'skipped' ? t('stepState.SKIPPED') : t(`stepState.${status}`),
      progress: state === 'running' ? (summary?.progress ?? 0) : null,
      progressLabel: t('step.progress', { step: title, percent: summary?.progress ?? 0 }),
      timing: timing(summary?.startedAt ?? null, summary?.finishedAt ?? null, state, context),
      message: summary?.message ? i18n.server(summary.messageCode, summary.messageParams, summary.message) : null,
      hint: state === 'failed' && !cancelled ? [catalogueHint(step, i18n), agentHint ? t('step.agentHint', { hint: agentHint }) : ''].filter(Boolean).join(' ') : null,
      hintTitle: t('step.hintTitle'),
      links,
    };
  });
}

/** The step catalogue's hint, in the user's language. */
function catalogueHint(step: InstallStep, i18n: I18n): string {
  const { hint } = describeStep(step);
  return i18n.server(hint.code, hint.params, hint.message);
}

function timing(startedAt: string | null, finishedAt: string | null, state: StepItemState, { t, i18n, now }: StepItemsContext): string {
  if (!startedAt) {
    return '';
  }
  const started = Date.parse(startedAt);
  const at = i18n.formatTime(startedAt);
  if (finishedAt) {
    return t('step.took', { time: at, duration: i18n.formatDuration(Date.parse(finishedAt) - started) });
  }
  return state === 'running' ? t('step.runningFor', { time: at, duration: i18n.formatDuration(now - started) }) : t('step.startedAt', { time: at });
}
