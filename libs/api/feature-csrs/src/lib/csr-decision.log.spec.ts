import { describe, expect, it } from 'vitest';
import { AUTO_APPROVER_ACTOR, AUTO_APPROVER_CONDITION_REASONS, deciderOf, deciderOfCondition } from './csr-decision.log';

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

describe('deciderOfCondition', () => {
  it.each([
    [AUTO_APPROVER_CONDITION_REASONS.approved, AUTO_APPROVER_ACTOR],
    [AUTO_APPROVER_CONDITION_REASONS.impostor, AUTO_APPROVER_ACTOR],
    [AUTO_APPROVER_CONDITION_REASONS.superseded, AUTO_APPROVER_ACTOR],
    ['KubectlApprove', 'KubectlApprove'],
    ['AutoApproved', 'AutoApproved'],
    [undefined, 'unknown'],
  ])('a condition with reason %s was decided by %s', (reason, decider) => {
    expect(deciderOfCondition(reason, 'unknown')).toBe(decider);
  });
});
