import type { InstallRunView, StepEventView } from '@ccos/console/data-access';
import type { I18n, Translate } from '@ccos/console/util-i18n';
import type { nodesMessages } from '../nodes.messages';
import { stepTitle } from './step-items';

type NodesTranslate = Translate<(typeof nodesMessages)['en']>;

/** The agent's event log of a run, in seq order: progress updates folded away unless asked for, and how many there are. */
export function runLog(events: readonly StepEventView[], showProgress: boolean): { readonly shown: readonly StepEventView[]; readonly progressCount: number } {
  const progressCount = events.filter((event) => event.status === 'PROGRESS').length;
  return { shown: showProgress ? events : events.filter((event) => event.status !== 'PROGRESS'), progressCount };
}

/** The latest step change in words ("Preflight checks: Failed"), for a screen reader's polite live region; progress updates are not changes. */
export function latestStepChange(events: readonly StepEventView[], t: NodesTranslate, i18n: I18n): string {
  const last = [...events].reverse().find((event) => event.status !== 'PROGRESS');
  return last ? `${stepTitle(last.step, i18n)}: ${t(`eventStatus.${last.status}`)}` : '';
}

/** How long the run took, or has taken so far while it runs. */
export function runDuration(run: Pick<InstallRunView, 'startedAt' | 'finishedAt'>, now: number, i18n: I18n): string {
  const end = run.finishedAt ? Date.parse(run.finishedAt) : now;
  return i18n.formatDuration(end - Date.parse(run.startedAt));
}
