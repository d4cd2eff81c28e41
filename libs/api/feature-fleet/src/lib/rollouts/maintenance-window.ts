import { CronExpressionParser } from 'cron-parser';
import type { MaintenanceWindow } from '@ccos/api/data-access-db';
import { type CodedText, message } from '@ccos/shared/messages';

/** Whether new nodes may start now, and when that changes. */
export type WindowState =
  | { readonly open: true; readonly closesAt: Date }
  | { readonly open: false; readonly opensAt: Date };

const MAX_DURATION_MINUTES = 7 * 24 * 60;

/** What is wrong with a window an operator gave (the field and its problem), or null. */
export function maintenanceWindowProblem(window: MaintenanceWindow): { readonly field: string; readonly problem: CodedText } | null {
  try {
    new Intl.DateTimeFormat('en', { timeZone: window.timeZone });
  } catch {
    return { field: 'timeZone', problem: message('rollout.window.badTimeZone', { value: window.timeZone }) };
  }
  try {
    CronExpressionParser.parse(window.cron, { tz: window.timeZone }).next();
  } catch (error) {
    return { field: 'cron', problem: message('rollout.window.badCron', { value: window.cron, detail: error instanceof Error ? error.message : String(error) }) };
  }
  if (!Number.isInteger(window.durationMinutes) || window.durationMinutes < 1 || window.durationMinutes > MAX_DURATION_MINUTES) {
    return { field: 'durationMinutes', problem: message('validation.between', { min: 1, max: MAX_DURATION_MINUTES }) };
  }
  return null;
}

/**
 * Open from each time the cron expression fires (in the window's time zone) for its duration. An
 * instant the expression fires at is inside the window it opens.
 */
export function windowState(window: MaintenanceWindow, now: Date): WindowState {
  const durationMs = window.durationMinutes * 60_000;
  const lastOpened = CronExpressionParser.parse(window.cron, { currentDate: new Date(now.getTime() + 1), tz: window.timeZone }).prev().toDate();
  if (lastOpened.getTime() + durationMs > now.getTime()) {
    return { open: true, closesAt: new Date(lastOpened.getTime() + durationMs) };
  }
  return { open: false, opensAt: CronExpressionParser.parse(window.cron, { currentDate: now, tz: window.timeZone }).next().toDate() };
}
