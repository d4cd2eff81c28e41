import { describe, expect, it } from 'vitest';
import { roleAllows } from './roles';

describe('roleAllows', () => {
  it.each([
    ['VIEWER', 'VIEWER', true], ['VIEWER', 'OPERATOR', false], ['VIEWER', 'ADMIN', false],
    ['OPERATOR', 'VIEWER', true], ['OPERATOR', 'OPERATOR', true], ['OPERATOR', 'ADMIN', false],
    ['ADMIN', 'VIEWER', true], ['ADMIN', 'OPERATOR', true], ['ADMIN', 'ADMIN', true],
  ] as const)('%s may do what needs %s: %s', (held, required, allowed) => {
    expect(roleAllows(held, required)).toBe(allowed);
  });
});
