import { computed, signal } from '@angular/core';
import { FormControl, FormGroup, type ValidatorFn } from '@angular/forms';
import type { RemoveNodeInput } from '@ccos/shared/api-schema';
import { DEFAULT_REMOVAL_OPTIONS, checkRemovalOptions } from '@ccos/shared/domain';

export type RemovalNumberField = 'gracePeriodSeconds' | 'timeoutSeconds';

const flag = (value: boolean) => new FormControl(value, { nonNullable: true });

function numbersOf(value: { gracePeriodSeconds: string; timeoutSeconds: string }): { gracePeriodSeconds: number; timeoutSeconds: number } {
  return { gracePeriodSeconds: Number(value.gracePeriodSeconds.trim()), timeoutSeconds: Number(value.timeoutSeconds.trim()) };
}

/** Whole numbers, then the domain's rule on them (checkRemovalOptions); errors are keyed by field. */
const removalNumbers: ValidatorFn = (group) => {
  const value = group.value as { gracePeriodSeconds: string; timeoutSeconds: string };
  const problems: Partial<Record<RemovalNumberField, true>> = {};
  for (const field of ['gracePeriodSeconds', 'timeoutSeconds'] as const) {
    if (!/^-?\d+$/.test(value[field].trim())) {
      problems[field] = true;
    }
  }
  if (Object.keys(problems).length === 0) {
    const problem = checkRemovalOptions({ ...DEFAULT_REMOVAL_OPTIONS, ...numbersOf(value) });
    if (problem) {
      problems[problem.field as RemovalNumberField] = true;
    }
  }
  return Object.keys(problems).length > 0 ? problems : null;
};

/**
 * The removal options as the page edits them. The flags that delete pods for good (`--force`,
 * `--delete-emptydir-data`) start off, as in the CLI and the domain's defaults: the page shows
 * which pods each would delete before it is ticked. `--ignore-daemonsets` starts on, as in the
 * design's command (it only leaves DaemonSet pods in place). Numbers are checked with the
 * domain's rule before anything is asked.
 */
export class RemoveNodeForm {
  readonly group = new FormGroup(
    {
      ignoreDaemonSets: flag(true),
      deleteEmptyDirData: flag(DEFAULT_REMOVAL_OPTIONS.deleteEmptyDirData),
      force: flag(DEFAULT_REMOVAL_OPTIONS.force),
      gracePeriodSeconds: new FormControl(String(DEFAULT_REMOVAL_OPTIONS.gracePeriodSeconds), { nonNullable: true }),
      timeoutSeconds: new FormControl(String(DEFAULT_REMOVAL_OPTIONS.timeoutSeconds), { nonNullable: true }),
      cleanHost: flag(false),
      allowLastWorker: flag(false),
      ungraceful: flag(false),
      confirmHostname: new FormControl('', { nonNullable: true }),
    },
    { validators: removalNumbers },
  );
  /** The group's value as a signal, so the preview and the page's texts follow the controls. */
  private readonly value = signal(this.group.getRawValue());

  constructor() {
    this.group.valueChanges.subscribe(() => this.value.set(this.group.getRawValue()));
  }

  get controls(): RemoveNodeForm['group']['controls'] {
    return this.group.controls;
  }

  readonly confirmHostname = computed(() => this.value().confirmHostname);
  readonly ungraceful = computed(() => this.value().ungraceful);

  readonly numberProblems = computed<Partial<Record<RemovalNumberField, true>>>(() => {
    this.value();
    return (this.group.errors as Partial<Record<RemovalNumberField, true>> | null) ?? {};
  });

  /**
   * The options without the typed name: what the preview is asked about while the user decides.
   * Typing the name (or anything that leaves the options as they were) asks nothing again.
   */
  readonly options = computed<RemoveNodeInput | null>(
    () => {
      const value = this.value();
      if (Object.keys(this.numberProblems()).length > 0) {
        return null;
      }
      return {
        ignoreDaemonSets: value.ignoreDaemonSets,
        deleteEmptyDirData: value.deleteEmptyDirData,
        force: value.force,
        ...numbersOf(value),
        cleanHost: value.cleanHost,
        allowLastWorker: value.allowLastWorker,
        ungraceful: value.ungraceful,
      };
    },
    { equal: (a, b) => JSON.stringify(a) === JSON.stringify(b) },
  );

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
}
