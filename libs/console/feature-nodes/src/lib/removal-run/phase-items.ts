import { type RemovalEventView, type RemovalRunView, eventsByGroup } from '@ccos/console/data-access';
import type { StepItem, StepItemState } from '@ccos/console/ui';
import type { I18n, Translate } from '@ccos/console/util-i18n';
import type { RemovalPhase } from '@ccos/shared/api-schema';
import { REMOVAL_PHASES } from '@ccos/shared/domain';
import type { removalMessages } from '../removal.messages';

type RemovalTranslate = Translate<(typeof removalMessages)['en']>;

type RunPhase = Exclude<RemovalPhase, 'DONE'>;

/** The phases a run goes through: cleaning the host only when asked for. */
export function phasesOf(run: RemovalRunView): RunPhase[] {
  return REMOVAL_PHASES.filter((phase): phase is RunPhase => phase !== 'DONE' && (phase !== 'CLEAN_HOST' || run.options.cleanHost));
}

/**
 * A removal run's phases as the stepper shows them: done before the current one, the
 * current one running, failed or cancelled, the rest waiting; all done once it succeeded.
 */
export function phaseItems(run: RemovalRunView, events: readonly RemovalEventView[], t: RemovalTranslate, i18n: I18n): StepItem[] {
  const phases = phasesOf(run);
  const current = run.phase === 'DONE' ? phases.length : phases.indexOf(run.phase);
  // Each event says the phase its run was in (a resumption or the run's end belongs where it happened).
  const eventsByPhase = eventsByGroup(events, (event) => (event.phase === 'DONE' ? null : event.phase));
  return phases.map((phase, index) => {
    let state: StepItemState;
    let label: string;
    if (run.status === 'SUCCEEDED' || index < current) {
      state = 'succeeded';
      label = t('phaseState.succeeded');
    } else if (index > current) {
      state = 'pending';
      label = t('phaseState.pending');
    } else if (run.status === 'RUNNING') {
      state = 'running';
      label = t('phaseState.running');
    } else {
      state = 'failed';
      label = run.status === 'CANCELLED' ? t('phaseState.cancelled') : t('phaseState.failed');
    }
    const last = eventsByPhase.get(phase)?.at(-1);
    return {
      id: phase,
      title: t(`phase.${phase}`),
      state,
      stateLabel: label,
      progress: null,
      progressLabel: '',
      timing: last ? i18n.formatTime(last.occurredAt) : '',
      message: last ? i18n.server(last.messageCode, last.messageParams, last.message) : null,
      hint: null,
      hintTitle: '',
      links: [],
    };
  });
}

/** The run's options as kubectl flags and this service's own, for a one-line summary. */
export function optionFlags(options: RemovalRunView['options']): string {
  return [
    options.ignoreDaemonSets ? '--ignore-daemonsets' : '',
    options.deleteEmptyDirData ? '--delete-emptydir-data' : '',
    options.force ? '--force' : '',
    options.gracePeriodSeconds >= 0 ? `--grace-period=${options.gracePeriodSeconds}` : '',
    options.timeoutSeconds > 0 ? `--timeout=${options.timeoutSeconds}s` : '',
    // The service's own options, named as the CLI's flags (`ccos-scaler nodes remove`).
    options.ungraceful ? '--ungraceful' : '',
    options.allowLastWorker ? '--allow-last-worker' : '',
    options.cleanHost ? '--clean-host' : '',
  ]
    .filter(Boolean)
    .join(' ');
}
