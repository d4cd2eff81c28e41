import { mkdirSync, rmdirSync, statSync } from 'node:fs';
import { STANDIN_FILES, readJson, statePath, writeJson } from '../host-state';
import { nevra, type RpmMetadata } from './rpm-package';

/**
 * The host's package database (what `rpm -qa` lists), shared by the rpm and
 * dnf stand-ins, with a transaction lock like rpm's.
 */
export type InstalledPackage = Omit<RpmMetadata, 'payloadSize' | 'payloadSha256'> & {
  readonly installTime: string;
  readonly size: number;
};

/** What a freshly installed host already has (so queries of base packages behave). */
export const BASE_PACKAGES: readonly InstalledPackage[] = [
  ['bash', '5.1.8', '6.el9_1'],
  ['coreutils', '8.32', '34.el9'],
  ['glibc', '2.34', '60.el9'],
  ['systemd', '252', '14.el9'],
  ['openssh-server', '8.7p1', '29.el9'],
  ['util-linux', '2.37.4', '11.el9'],
  ['rpm', '4.16.1.3', '22.el9'],
  ['dnf', '4.14.0', '5.el9'],
  ['kernel', '5.14.0', '284.11.1.el9_2'],
  ['iproute', '6.1.0', '1.el9'],
  ['selinux-policy-targeted', '38.1.11', '2.el9'],
].map(([name, version, release]) => ({
  name: name ?? '',
  version: version ?? '',
  release: release ?? '',
  arch: name === 'selinux-policy-targeted' ? 'noarch' : 'x86_64',
  summary: `${name ?? ''} (preinstalled)`,
  requires: [],
  installTime: '2026-01-01T00:00:00.000Z',
  size: 0,
}));

const databaseFile = () => statePath(STANDIN_FILES.rpmdb);
const lockDir = () => statePath('rpm.lock');

/** The installed packages. */
export function readInstalled(): InstalledPackage[] {
  return readJson<InstalledPackage[]>(databaseFile(), [...BASE_PACKAGES]);
}

/** Replaces the installed set. */
export function writeInstalled(packages: readonly InstalledPackage[]): void {
  writeJson(databaseFile(), [...packages].sort((a, b) => nevra(a).localeCompare(nevra(b))));
}

/**
 * Runs `action` holding the transaction lock; waits for another rpm/dnf
 * (up to `waitMs`) as rpm does, saying so on stderr.
 */
export async function withTransactionLock<T>(action: () => T | Promise<T>, waitMs = 60_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  let told = false;
  mkdirSync(statePath(), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir());
      break;
    } catch {
      if (isStale(lockDir())) {
        rmdirSync(lockDir());
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`can't create transaction lock on ${lockDir()} (Resource temporarily unavailable)`);
      }
      if (!told) {
        process.stderr.write(`waiting for transaction lock on ${lockDir()}\n`);
        told = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await action();
  } finally {
    rmdirSync(lockDir());
  }
}

function isStale(dir: string): boolean {
  try {
    return Date.now() - statSync(dir).mtimeMs > 10 * 60_000;
  } catch {
    return false;
  }
}
