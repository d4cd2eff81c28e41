import { computed, signal } from '@angular/core';
import type { RemoveNodeInput } from '@ccos/shared/api-schema';
import { DEFAULT_REMOVAL_OPTIONS, checkRemovalOptions } from '@ccos/shared/domain';

export type RemovalNumberField = 'gracePeriodSeconds' | 'timeoutSeconds';

/**
 * The removal options as the page edits them. The drain flags start as the design's
 * command (`oc adm drain --force --delete-local-data --ignore-daemonsets`); numbers are
 * checked with the domain's rule before anything is asked.
 */
export class RemoveNodeForm {
  readonly ignoreDaemonSets = signal(true);
  readonly deleteEmptyDirData = signal(true);
  readonly force = signal(true);
  readonly gracePeriodSeconds = signal(String(DEFAULT_REMOVAL_OPTIONS.gracePeriodSeconds));
  readonly timeoutSeconds = signal(String(DEFAULT_REMOVAL_OPTIONS.timeoutSeconds));
  readonly cleanHost = signal(false);
  readonly allowLastWorker = signal(false);
  readonly ungraceful = signal(false);
  readonly confirmHostname = signal('');

  readonly numberProblems = computed(() => {
    const problems: Partial<Record<RemovalNumberField, true>> = {};
    for (const field of ['gracePeriodSeconds', 'timeoutSeconds'] as const) {
      if (!/^-?\d+$/.test(this[field]().trim())) {
        problems[field] = true;
      }
    }
    if (Object.keys(problems).length === 0) {
      const problem = checkRemovalOptions({ ...DEFAULT_REMOVAL_OPTIONS, ...this.numbers() });
      if (problem) {
        problems[problem.field as RemovalNumberField] = true;
      }
    }
    return problems;
  });

  /** The options without the typed name: what the preview is asked about while the user decides. */
  readonly options = computed<RemoveNodeInput | null>(() => {
    if (Object.keys(this.numberProblems()).length > 0) {
      return null;
    }
    return {
      ignoreDaemonSets: this.ignoreDaemonSets(),
      deleteEmptyDirData: this.deleteEmptyDirData(),
      force: this.force(),
      ...this.numbers(),
      cleanHost: this.cleanHost(),
      allowLastWorker: this.allowLastWorker(),
      ungraceful: this.ungraceful(),
    };
  });

  /** The drain the options amount to, as the seed document writes it. */
  command(hostname: string): string {
    const options = this.options();
    const flags = options
      ? [
          options.force ? '--force' : '',
          options.deleteEmptyDirData ? '--delete-emptydir-data' : '',
          options.ignoreDaemonSets ? '--ignore-daemonsets' : '',
          (options.gracePeriodSeconds ?? -1) >= 0 ? `--grace-period=${options.gracePeriodSeconds}` : '',
          (options.timeoutSeconds ?? 0) > 0 ? `--timeout=${options.timeoutSeconds}s` : '',
        ].filter(Boolean)
      : [];
    return [`oc adm drain ${hostname}`, ...flags].join(' ');
  }

  private numbers(): { gracePeriodSeconds: number; timeoutSeconds: number } {
    return { gracePeriodSeconds: Number(this.gracePeriodSeconds().trim()), timeoutSeconds: Number(this.timeoutSeconds().trim()) };
  }
}
