import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * What every benchmark row hands the runner (bench/run.ts): figures, each beside the reference
 * it is judged against. A row module exports `benchRows(options)` returning them; the module
 * stays runnable on its own (`npx tsx bench/<name>.ts`), printing as it always did.
 */
export interface Figure {
  /** What was measured, e.g. "reportStep events/s, 20 agents". */
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The yardstick, in the same unit. `measured: false` when it is computed (e.g. a design's expected latency). */
  readonly reference: { readonly name: string; readonly value: number; readonly measured: boolean };
  /** Which way is better for `value`, so a reader (and the verdict) knows what a ratio means. */
  readonly better: 'higher' | 'lower';
  /** The goal for this figure, if it has one: on the value itself or on value / reference. */
  readonly goal?: { readonly on: 'value' | 'ratio'; readonly atLeast?: number; readonly atMost?: number; readonly text: string };
  readonly note?: string;
}

export interface BenchOptions {
  /** A tiny size that proves the row runs (the smoke test), not a figure to quote. */
  readonly smoke: boolean;
  /** Where progress lines go (the runner sends them to stderr; the table is on stdout). */
  readonly log: (line: string) => void;
}

/** Thrown by a row whose prerequisite is absent (nginx, a build): reported as "not available", not as a crash. */
export class RowUnavailable extends Error {
  override readonly name = 'RowUnavailable';
}

/** True when `moduleUrl` is the script node was started with (`npx tsx bench/<name>.ts`). */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) {
    return false;
  }
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/** The p-th percentile (nearest rank) of ascending values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** For a standalone run: prints the figures the row returned, one a line. */
export function printFigures(figures: readonly Figure[]): void {
  for (const figure of figures) {
    const ratio = figure.value / figure.reference.value;
    console.log(`${figure.name}: ${formatValue(figure.value)} ${figure.unit}; ${figure.reference.name}: ${formatValue(figure.reference.value)} ${figure.unit}; ratio ${formatRatio(ratio)}`);
  }
}

export function formatValue(value: number): string {
  if (!Number.isFinite(value)) {
    return String(value);
  }
  const magnitude = Math.abs(value);
  if (Number.isInteger(value) && magnitude < 1e6) {
    return value.toLocaleString('en-US');
  }
  return magnitude >= 100 ? Math.round(value).toLocaleString('en-US') : magnitude >= 10 ? value.toFixed(1) : magnitude >= 1 ? value.toFixed(2) : value.toPrecision(2);
}

/** A ratio with two significant digits at least, so 0.0009 does not print as 0.00. */
export function formatRatio(ratio: number): string {
  return !Number.isFinite(ratio) ? String(ratio) : Math.abs(ratio) >= 1 ? ratio.toFixed(2) : ratio.toPrecision(2);
}
