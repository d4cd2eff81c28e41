import { describe, expect, it } from 'vitest';
import { FakeClock, MemoryLogger } from '@ccos/agent/util-host/testing';
import { FakeApiClient, unauthenticated, unreachable } from '../testing/fake-api-client';
import { ApiError } from './api-errors';
import { uploadDiagnostics } from './diagnostics-upload';

describe('uploadDiagnostics', () => {
  it('retries like events until the service takes it', async () => {
    const clock = new FakeClock();
    const api = new FakeApiClient(clock);
    let failures = 4;
    api.failUpload = () => (failures-- > 0 ? unreachable() : null);
    expect(await uploadDiagnostics(Buffer.from('x'), { api, clock, log: new MemoryLogger(), timeoutMs: 60_000 })).toBe('uploaded');
    expect(api.uploads).toHaveLength(1);
    expect(clock.monotonic()).toBeGreaterThan(0);
  });

  it('stops on a refused token, at its deadline, and for bundles over 8 MiB', async () => {
    const clock = new FakeClock();
    const api = new FakeApiClient(clock);
    api.failUpload = () => unauthenticated();
    const log = new MemoryLogger();
    expect(await uploadDiagnostics(Buffer.from('x'), { api, clock, log, timeoutMs: 60_000 })).toBe('unauthenticated');
    api.failUpload = () => unreachable();
    expect(await uploadDiagnostics(Buffer.from('x'), { api, clock, log, timeoutMs: 60_000 })).toBe('timeout');
    expect(await uploadDiagnostics(Buffer.alloc(8 * 1024 * 1024 + 1), { api, clock, log, timeoutMs: 60_000 })).toBe('refused');
  });

  it('retries while the run has not failed yet (425), and takes 409 (not a failed run, or a bundle stored already) as final at once', async () => {
    const clock = new FakeClock();
    const api = new FakeApiClient(clock);
    const log = new MemoryLogger();
    let early = 2;
    api.failUpload = () => (early-- > 0 ? new ApiError('transient', 'HTTP_425', 'diagnostics upload answered HTTP 425') : null);
    expect(await uploadDiagnostics(Buffer.from('x'), { api, clock, log, timeoutMs: 60_000 })).toBe('uploaded');
    let attempts = 0;
    api.failUpload = () => {
      attempts += 1;
      return new ApiError('rejected', 'HTTP_409', 'diagnostics upload answered HTTP 409: install run r has its diagnostics already');
    };
    const started = clock.monotonic();
    expect(await uploadDiagnostics(Buffer.from('y'), { api, clock, log, timeoutMs: 60_000 })).toBe('refused');
    expect(attempts).toBe(1);
    expect(clock.monotonic()).toBe(started);
  });
});
