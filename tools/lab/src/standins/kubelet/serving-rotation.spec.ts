import { describe, expect, it } from 'vitest';
import { rotationDeadline, untilHostTime } from './serving-rotation';

describe('rotationDeadline', () => {
  const notBefore = new Date('2026-01-01T00:00:00Z');
  // kube-sim backdates by 5 minutes: 600 s asked, 900 s of validity.
  const notAfter = new Date('2026-01-01T00:15:00Z');
  const issuedAt = notBefore.getTime() + 300_000;

  it.each([
    [0, 0.7],
    [1, 0.9],
  ])('with random %d rotates at %d of the validity', (random, fraction) => {
    const plan = rotationDeadline({ notBefore, notAfter }, issuedAt, issuedAt, () => random);
    expect(plan.deadline).toBe(notBefore.getTime() + fraction * 900_000);
  });

  it('anchors to the host clock at receipt: a host whose clock jumped ahead does not rotate again at once', () => {
    const offset = 520_000;
    const plan = rotationDeadline({ notBefore, notAfter }, issuedAt + offset, issuedAt, () => 1);
    expect(plan.deadline - (issuedAt + offset)).toBe(0.9 * 900_000 - 300_000);
  });
});

describe('untilHostTime', () => {
  it('returns once the host clock passes the deadline, e.g. after a jump', async () => {
    let offset = 0;
    const started = Date.now();
    setTimeout(() => {
      offset = 3_600_000;
    }, 100);
    await untilHostTime(started + 3_000_000, () => Date.now() + offset, new AbortController().signal);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
