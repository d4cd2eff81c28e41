import type { InstalledPackage } from './rpm-database';
import { nevra, type RpmMetadata } from './rpm-package';

/**
 * rpm's transaction check, shared by the rpm and dnf stand-ins: which
 * packages a set of files installs or upgrades, and what stops it (already
 * installed, failed dependencies). Dependencies resolve against the packages
 * of the same transaction plus the installed set, so installing all rpms in
 * one command works and one by one in the wrong order fails, as on a real host.
 */
export interface TransactionPlan {
  /** Packages to install, in dependency order. */
  readonly install: readonly RpmMetadata[];
  /** Installed packages an upgrade replaces. */
  readonly replace: readonly InstalledPackage[];
  /** Packages skipped because exactly that version is installed. */
  readonly alreadyInstalled: readonly RpmMetadata[];
  /** `name is needed by nevra` lines. */
  readonly missing: readonly string[];
}

/** Options of a transaction. */
export interface TransactionOptions {
  readonly upgrade: boolean;
  readonly noDeps?: boolean;
  readonly replacePackages?: boolean;
}

/** Plans installing `packages` over `installed`. */
export function planTransaction(
  packages: readonly RpmMetadata[],
  installed: readonly InstalledPackage[],
  options: TransactionOptions,
): TransactionPlan {
  const installedNevras = new Set(installed.map(nevra));
  const alreadyInstalled: RpmMetadata[] = [];
  const install: RpmMetadata[] = [];
  const seen = new Set<string>();
  for (const pkg of packages) {
    const id = nevra(pkg);
    if (seen.has(id)) {
      continue;
    }
    seen.add(id);
    if (installedNevras.has(id) && !options.replacePackages) {
      alreadyInstalled.push(pkg);
    } else {
      install.push(pkg);
    }
  }
  const upgradedNames = new Set(options.upgrade ? install.map((pkg) => pkg.name) : []);
  const replace = installed.filter((pkg) => upgradedNames.has(pkg.name) || (options.replacePackages && install.some((p) => nevra(p) === nevra(pkg))));
  const available = new Set([
    ...installed.filter((pkg) => !replace.includes(pkg)).map((pkg) => pkg.name),
    ...install.map((pkg) => pkg.name),
  ]);
  const missing = options.noDeps
    ? []
    : install.flatMap((pkg) => pkg.requires.filter((name) => !available.has(name)).map((name) => `${name} is needed by ${nevra(pkg)}`));
  return { install: dependencyOrder(install), replace, alreadyInstalled, missing };
}

/** Orders packages so that each comes after what it requires (as rpm orders a transaction). */
export function dependencyOrder(packages: readonly RpmMetadata[]): RpmMetadata[] {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const ordered: RpmMetadata[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (pkg: RpmMetadata) => {
    if (state.get(pkg.name) !== undefined) {
      return;
    }
    state.set(pkg.name, 'visiting');
    for (const name of pkg.requires) {
      const dependency = byName.get(name);
      if (dependency !== undefined) {
        visit(dependency);
      }
    }
    state.set(pkg.name, 'done');
    ordered.push(pkg);
  };
  packages.forEach(visit);
  return ordered;
}

/** The progress bar line rpm prints for step `index` of `total`. */
export function progressLine(label: string, index: number, total: number): string {
  const percent = Math.round((index / total) * 100);
  return `${label.padEnd(38)}################################# [${String(percent).padStart(3)}%]`;
}
