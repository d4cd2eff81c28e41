import { describe, expect, it } from 'vitest';
import { maintenanceWindowProblem, windowState } from './maintenance-window';

describe('maintenance windows', () => {
  // 02:00–04:00 in Shanghai (UTC+8) is 18:00–20:00 UTC the day before.
  const nightly = { cron: '0 2 * * *', durationMinutes: 120, timeZone: 'Asia/Shanghai' };

  it('is open from the cron time in its time zone for its duration', () => {
    expect(windowState(nightly, new Date('2026-12-07T17:59:59Z'))).toEqual({ open: false, opensAt: new Date('2026-12-07T18:00:00Z') });
    expect(windowState(nightly, new Date('2026-12-07T18:00:00Z'))).toEqual({ open: true, closesAt: new Date('2026-12-07T20:00:00Z') });
    expect(windowState(nightly, new Date('2026-12-07T19:59:59Z'))).toEqual({ open: true, closesAt: new Date('2026-12-07T20:00:00Z') });
    expect(windowState(nightly, new Date('2026-12-07T20:00:00Z'))).toEqual({ open: false, opensAt: new Date('2026-12-08T18:00:00Z') });
  });

  it('names what is wrong with a window', () => {
    expect(maintenanceWindowProblem(nightly)).toBeNull();
    expect(maintenanceWindowProblem({ ...nightly, timeZone: 'Mars/Olympus' })).toMatchObject({ field: 'timeZone', problem: { code: 'rollout.window.badTimeZone' } });
    expect(maintenanceWindowProblem({ ...nightly, cron: 'every night' })).toMatchObject({ field: 'cron', problem: { code: 'rollout.window.badCron' } });
    expect(maintenanceWindowProblem({ ...nightly, cron: '0 25 * * *' })).toMatchObject({ field: 'cron' });
    expect(maintenanceWindowProblem({ ...nightly, durationMinutes: 0 })).toMatchObject({ field: 'durationMinutes' });
  });
});
