import { describe, expect, it } from 'vitest';
import { failedHardwareValidations } from './hardware';

const POOL = { cpus: 4, memoryBytes: 8 * 2 ** 30 };

describe('hardware validations against a pool\'s minimums', () => {
  it('names each failed validation with what the host has and what the pool promises', () => {
    expect(failedHardwareValidations({ cpus: 2, memoryBytes: 3.8 * 2 ** 30 }, POOL).map((failed) => failed.text)).toEqual([
      'has-min-cpu-cores: 2 < 4',
      'has-min-memory: 3.8 GiB < 8 GiB',
    ]);
  });

  it('passes a host at or above the minimums, and one whose hardware is not known', () => {
    expect(failedHardwareValidations({ cpus: 4, memoryBytes: 8 * 2 ** 30 }, POOL)).toEqual([]);
    expect(failedHardwareValidations({ cpus: 16, memoryBytes: null }, POOL)).toEqual([]);
    expect(failedHardwareValidations(undefined, POOL)).toEqual([]);
  });
});
