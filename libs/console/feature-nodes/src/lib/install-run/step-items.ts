import type { InstallRunView, StepEventView } from '@ccos/console/data-access';
import type { StepItem, StepItemLink, StepItemState } from '@ccos/console/ui';
import { INSTALL_STEPS, type InstallStep, describeStep, stepIndex } from '@ccos/shared/domain';
import type { I18n, Language, Translate } from '@ccos/console/util-i18n';
import type { nodesMessages } from '../nodes.messages';

type NodesTranslate = Translate<(typeof nodesMessages)['en']>;

/** kubelet's step says which CSRs it waits for: "waiting for CSR approval: csr-a, csr-b". */
const WAITING_FOR_CSRS = /waiting for CSR approval: ([\w.:-]+(?:, [\w.:-]+)*)/;

export function stepTitle(step: InstallStep, language: Language): string {
  return describeStep(step).title[language];
}

/** The CSR names a START_KUBELET message waits for. */
export function csrNamesIn(message: string | null | undefined): readonly string[] {
  const match = WAITING_FOR_CSRS.exec(message ?? '');
  return match ? match[1].split(', ') : [];
}

/** The agent's own hint in a FAILED event's detail, if it gave one. */
export function agentHintOf(events: readonly StepEventView[], step: InstallStep): string | null {
  const failed = [...events].reverse().find((event) => event.step === step && event.status === 'FAILED');
  const hint = failed?.detail?.['hint'];
  return typeof hint === 'string' && hint.trim() ? hint : null;
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
  const language = i18n.language();
  const first = stepIndex(run.startStep);
  return INSTALL_STEPS.map((step) => {
    const summary = run.steps.find((entry) => entry.step === step);
    const status = summary?.status ?? 'PENDING';
    let state: StepItemState;
    if (status === 'PENDING') {
      state = stepIndex(step) < first ? 'skipped' : 'pending';
    } else if (status === 'RUNNING') {
      state = run.status === 'RUNNING' ? 'running' : 'failed';
    } else {
      state = status === 'SUCCEEDED' ? 'succeeded' : 'failed';
    }
    const interrupted = status === 'RUNNING' && state === 'failed';
    // A cancelled run's last step "failed" because the operator stopped it: no fix to suggest.
    const cancelled = run.status === 'CANCELLED' && state === 'failed';
    const title = stepTitle(step, language);
    const links: StepItemLink[] =
      step === 'START_KUBELET' && state === 'running'
        ? csrNamesIn(summary?.message).map((name) => ({ label: t('step.reviewCsr', { name }), commands: ['/clusters', context.clusterId, 'csrs'], queryParams: { csr: name } }))
        : [];
    const agentHint = state === 'failed' ? agentHintOf(events, step) : null;
    return {
      id: step,
      title,
      state,
      stateLabel: cancelled ? t('stepState.CANCELLED') : interrupted ? t('stepState.INTERRUPTED') : state === 'skipped' ? t('stepState.SKIPPED') : t(`stepState.${status}`),
      progress: state === 'running' ? (summary?.progress ?? 0) : null,
      progressLabel: t('step.progress', { step: title, percent: summary?.progress ?? 0 }),
      timing: timing(summary?.startedAt ?? null, summary?.finishedAt ?? null, state, context),
      message: summary?.message ?? null,
      hint: state === 'failed' && !cancelled ? [catalogueHint(step, language), agentHint ? t('step.agentHint', { hint: agentHint }) : ''].filter(Boolean).join(' ') : null,
      hintTitle: t('step.hintTitle'),
      links,
    };
  });
}

/** The step catalogue's hint, in the user's language. */
function catalogueHint(step: InstallStep, language: Language): string {
  return describeStep(step).hint[language];
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
