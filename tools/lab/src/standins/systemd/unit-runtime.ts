import { rmSync } from 'node:fs';
import { STANDIN_FILES, readJson, statePath, writeJson } from '../host-state';
import { processAlive } from '../process-state';
import type { UnitSources } from './unit-file';

/**
 * What the systemctl stand-in knows about a unit between invocations: its
 * run state (written by the supervisor) and the definition systemd has
 * "loaded" (a snapshot taken on first use and on `daemon-reload`, so a unit
 * file changed on disk without a reload keeps its old definition, as on a
 * real host).
 */
export type ActiveState = 'active' | 'inactive' | 'failed' | 'activating' | 'deactivating';

export interface UnitRuntime {
  readonly activeState: ActiveState;
  readonly subState: string;
  readonly supervisorPid?: number;
  readonly mainPid?: number;
  /** ISO time of the last state change. */
  readonly since: string;
  readonly result: string;
  readonly nRestarts: number;
  readonly execMainStatus?: number;
  /** Which `systemctl start` this state answers. */
  readonly job?: string;
  /** The start job whose service got started (Type=simple: once forked, even if it fails right after). */
  readonly startedJob?: string;
}

const INACTIVE: UnitRuntime = { activeState: 'inactive', subState: 'dead', since: '', result: 'success', nRestarts: 0 };

function runtimeFile(unit: string): string {
  return statePath(STANDIN_FILES.systemd, 'runtime', `${unit}.json`);
}

function loadedFile(unit: string): string {
  return statePath(STANDIN_FILES.systemd, 'loaded', `${unit}.json`);
}

/** The recorded state of a unit, corrected when its supervisor died unseen. */
export function readRuntime(unit: string): UnitRuntime {
  const runtime = readJson<UnitRuntime>(runtimeFile(unit), INACTIVE);
  const running = runtime.activeState === 'active' || runtime.activeState === 'activating' || runtime.activeState === 'deactivating';
  const needsSupervisor = running && !(runtime.activeState === 'active' && runtime.subState === 'exited');
  if (needsSupervisor && (runtime.supervisorPid === undefined || !processAlive(runtime.supervisorPid))) {
    return { ...runtime, activeState: 'failed', subState: 'failed', result: 'signal', mainPid: undefined };
  }
  return runtime;
}

/** Records a unit's state. */
export function writeRuntime(unit: string, runtime: UnitRuntime): void {
  writeJson(runtimeFile(unit), runtime);
}

/** Changes some fields of a unit's state. */
export function updateRuntime(unit: string, change: Partial<UnitRuntime>): UnitRuntime {
  const next = { ...readJson<UnitRuntime>(runtimeFile(unit), INACTIVE), ...change, since: new Date().toISOString() };
  writeRuntime(unit, next);
  return next;
}

/** The loaded definition of a unit, or null when systemd has not loaded it yet. */
export function readLoaded(unit: string): UnitSources | null {
  return readJson<UnitSources | null>(loadedFile(unit), null);
}

/** Loads a unit (snapshots its sources). */
export function writeLoaded(sources: UnitSources): void {
  writeJson(loadedFile(sources.name), sources);
}

/** Forgets a unit's loaded definition (its file was removed before a reload). */
export function forgetLoaded(unit: string): void {
  rmSync(loadedFile(unit), { force: true });
}

/** Whether the two sources are the same definition. */
export function sameSources(a: UnitSources, b: UnitSources): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
