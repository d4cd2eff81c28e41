import { describe, expect, it } from 'vitest';
import { AUTO_APPROVER_ACTOR, deciderOf } from './csr-decision.log';

describe('deciderOf', () => {
  it.each([
    [{ actor: AUTO_APPROVER_ACTOR }, 'auto-approver'],
    [{ actor: AUTO_APPROVER_ACTOR, forced: false }, 'auto-approver'],
    [{ actor: 'alice', forced: true }, 'forced'],
    [{ actor: 'alice', forced: false }, 'operator'],
    [{ actor: 'bob' }, 'operator'],
  ])('%j → %s', (input, decider) => {
    expect(deciderOf(input)).toBe(decider);
  });
});
