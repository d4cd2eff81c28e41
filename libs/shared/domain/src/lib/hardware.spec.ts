import { describe, expect, it } from 'vitest';
import { type HardwareFacts, failedHardwareValidations, hardwareChanges, missingLabelValidation } from './hardware';

const POOL = { cpus: 4, memoryBytes: 8 * 2 ** 30 };

describe('hardware validations against a pool\'s minimums', () => {
  it('names each failed validation with what the host has and what the pool promises', () => {
    expect(failedHardwareValidations({ cpus: 2, memoryBytes: 3.8 * 2 ** 30 }, POOL).map((failed) => failed.text)).toEqual([
      'has-min-cpu-cores: 2 < 4',
      'has-min-memory: 3.8 GiB < 8 GiB',
    ]);
  });

  it('checks the largest disk against a disk minimum, and asks nothing of a zero minimum or a host that lists no disk', () => {
    const disks = [{ name: 'sda', sizeBytes: 100 * 2 ** 30, rotational: false }, { name: 'sdb', sizeBytes: 50 * 2 ** 30, rotational: true }];
    expect(failedHardwareValidations({ cpus: 8, memoryBytes: 16 * 2 ** 30, disks }, { ...POOL, diskBytes: 200 * 2 ** 30 }).map((failed) => failed.text)).toEqual(['has-min-disk: 100 GiB < 200 GiB']);
    expect(failedHardwareValidations({ cpus: 8, memoryBytes: 16 * 2 ** 30, disks }, { ...POOL, diskBytes: 100 * 2 ** 30 })).toEqual([]);
    expect(failedHardwareValidations({ cpus: 8, memoryBytes: 16 * 2 ** 30, disks: [] }, { ...POOL, diskBytes: 200 * 2 ** 30 })).toEqual([]);
    expect(failedHardwareValidations({ cpus: 1, memoryBytes: 2 ** 30, disks }, { cpus: 0, memoryBytes: 0, diskBytes: 0 })).toEqual([]);
  });

  it('passes a host at or above the minimums, and one whose hardware is not known', () => {
    expect(failedHardwareValidations({ cpus: 4, memoryBytes: 8 * 2 ** 30 }, POOL)).toEqual([]);
    expect(failedHardwareValidations({ cpus: 16, memoryBytes: null }, POOL)).toEqual([]);
    expect(failedHardwareValidations(undefined, POOL)).toEqual([]);
  });
});

describe('the label keys every host must be given', () => {
  it('names each missing key, and passes a host that has them all or a cluster that asks none', () => {
    expect(missingLabelValidation([{ key: 'zone' }], { labelKeys: ['zone', 'rack', 'row'] })?.text).toBe('has-labels: missing rack, row');
    expect(missingLabelValidation([{ key: 'zone' }, { key: 'rack' }], { labelKeys: ['zone', 'rack'] })).toBeNull();
    expect(missingLabelValidation([], {})).toBeNull();
  });
});

describe('hardwareChanges', () => {
  const hardware: HardwareFacts = {
    cpus: 4,
    cpuModel: 'Xeon',
    memoryBytes: 16 * 2 ** 30,
    disks: [{ name: 'sda', sizeBytes: 480 * 2 ** 30, rotational: false }, { name: 'sdb', sizeBytes: 2 ** 40, rotational: true }],
    nics: [{ name: 'eth0', mac: '52:54:00:12:34:56', state: 'up' }],
    systemVendor: 'ACME',
    systemProduct: 'R1',
    systemSerial: 'S1',
  };

  it('finds nothing between two equal inspections', () => {
    expect(hardwareChanges({ kernel: '5.14', hardware }, { kernel: '5.14', hardware: { ...hardware } })).toEqual([]);
  });

  it('names each field, disk and NIC that changed, with before and after as an operator reads them', () => {
    const after: HardwareFacts = {
      ...hardware,
      memoryBytes: 8 * 2 ** 30,
      disks: [{ name: 'sda', sizeBytes: 480 * 2 ** 30, rotational: false }, { name: 'nvme0n1', sizeBytes: 2 ** 40, rotational: false }],
      nics: [{ name: 'eth0', mac: '52:54:00:12:34:56', state: 'down' }],
      systemSerial: 'S2',
    };
    expect(hardwareChanges({ kernel: '5.14', osRelease: 'RHEL 9.2', hardware }, { kernel: '5.14.1', osRelease: 'RHEL 9.2', hardware: after })).toEqual([
      { field: 'memoryBytes', item: null, before: '16 GiB', after: '8 GiB' },
      { field: 'disk', item: 'nvme0n1', before: null, after: 'nvme0n1 1024 GiB SSD' },
      { field: 'disk', item: 'sdb', before: 'sdb 1024 GiB HDD', after: null },
      { field: 'nic', item: 'eth0', before: 'eth0 52:54:00:12:34:56 up', after: 'eth0 52:54:00:12:34:56 down' },
      { field: 'system', item: null, before: 'ACME R1 S1', after: 'ACME R1 S2' },
      { field: 'kernel', item: null, before: '5.14', after: '5.14.1' },
    ]);
  });

  it('counts what the earlier inspection did not read as no change', () => {
    expect(hardwareChanges({ kernel: '5.14' }, { kernel: '5.14', hardware })).toEqual([]);
  });
});
