import { describe, expect, it } from 'vitest';
import { failureCodeOf } from './install-metrics';

describe('failureCodeOf', () => {
  it.each([
    [{ code: 'DISK_FULL', hint: 'free space' }, 'DISK_FULL'],
    [{ code: 'KUBELET_DIED' }, 'KUBELET_DIED'],
    [{ code: 'MCS_TLS_VERIFY_FAILED' }, 'MCS_TLS_VERIFY_FAILED'],
    [{ code: 'disk_full' }, 'UNKNOWN'],
    [{ code: 'NO_SUCH_CODE_FROM_A_HOSTILE_AGENT' }, 'UNKNOWN'],
    [{ code: 'DISK FULL; rm -rf /' }, 'UNKNOWN'],
    [{ code: `A${'B'.repeat(48)}` }, 'UNKNOWN'],
    [{ code: 42 }, 'UNKNOWN'],
    [{}, 'UNKNOWN'],
    [null, 'UNKNOWN'],
    [undefined, 'UNKNOWN'],
  ])('%j → %s', (detail, code) => {
    expect(failureCodeOf(detail as Record<string, unknown> | null | undefined)).toBe(code);
  });
});
