// Angular's forms are partially compiled; without a DOM test bed the JIT compiler links them.
import '@angular/compiler';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
import { RemoveNodeForm } from './remove-node.form';

describe('the remove-node form', () => {
  it('starts on the safe side: nothing deleted for good unless ticked (as the CLI), DaemonSet pods left in place', () => {
    const form = new RemoveNodeForm();
    expect(form.numberProblems()).toEqual({});
    expect(form.options()).toMatchObject({ ignoreDaemonSets: true, deleteEmptyDirData: false, force: false, cleanHost: false, ungraceful: false });
    expect(form.options()).toMatchObject({ force: DEFAULT_REMOVAL_OPTIONS.force, deleteEmptyDirData: DEFAULT_REMOVAL_OPTIONS.deleteEmptyDirData });
    expect(form.options()).toMatchObject({ gracePeriodSeconds: DEFAULT_REMOVAL_OPTIONS.gracePeriodSeconds, timeoutSeconds: DEFAULT_REMOVAL_OPTIONS.timeoutSeconds });
    // Each pod's own grace period, and an hour before the drain gives up (kubectl's default is no limit).
    expect(form.command('w1')).toBe('oc adm drain w1 --ignore-daemonsets --timeout=3600s');
    form.controls.timeoutSeconds.setValue('300');
    form.controls.force.setValue(true);
    expect(form.command('w1')).toBe('oc adm drain w1 --force --ignore-daemonsets --timeout=300s');
  });

  it('refuses numbers that are not whole, then those the domain refuses, and asks no preview meanwhile', () => {
    const form = new RemoveNodeForm();
    form.controls.gracePeriodSeconds.setValue('1.5');
    expect(form.numberProblems()).toEqual({ gracePeriodSeconds: true });
    expect(form.options()).toBeNull();
    form.controls.gracePeriodSeconds.setValue('-2');
    expect(form.numberProblems()).toEqual({ gracePeriodSeconds: true });
    form.controls.gracePeriodSeconds.setValue('-1');
    form.controls.timeoutSeconds.setValue('-5');
    expect(form.numberProblems()).toEqual({ timeoutSeconds: true });
    form.controls.timeoutSeconds.setValue(' 60 ');
    expect(form.options()).toMatchObject({ gracePeriodSeconds: -1, timeoutSeconds: 60 });
  });

  it('keeps the same options while only the typed name changes, so the preview is not asked again', () => {
    const form = new RemoveNodeForm();
    const before = form.options();
    form.controls.confirmHostname.setValue('w1');
    expect(form.confirmHostname()).toBe('w1');
    expect(form.options()).toBe(before);
    form.controls.cleanHost.setValue(true);
    expect(form.options()).not.toBe(before);
    expect(form.options()?.cleanHost).toBe(true);
  });
});
