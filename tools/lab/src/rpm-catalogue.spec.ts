import { describe, expect, it } from 'vitest';
import { RPM_CATALOGUE } from './rpm-catalogue';
import { BASE_PACKAGES } from './standins/rpm/rpm-database';

describe('the rpm catalogue', () => {
  it('has the 73 rpms of the seed, each dependency satisfiable, one of a few MiB', () => {
    expect(RPM_CATALOGUE).toHaveLength(73);
    const names = new Set([...RPM_CATALOGUE.map((rpm) => rpm.name), ...BASE_PACKAGES.map((pkg) => pkg.name)]);
    expect(new Set(RPM_CATALOGUE.map((rpm) => rpm.name)).size).toBe(73);
    expect(RPM_CATALOGUE.flatMap((rpm) => rpm.requires).filter((name) => !names.has(name))).toEqual([]);
    const total = RPM_CATALOGUE.reduce((sum, rpm) => sum + rpm.sizeKiB, 0) / 1024;
    expect(total).toBeGreaterThan(20);
    expect(total).toBeLessThan(40);
    expect(Math.max(...RPM_CATALOGUE.map((rpm) => rpm.sizeKiB))).toBeGreaterThanOrEqual(4096);
  });
});
