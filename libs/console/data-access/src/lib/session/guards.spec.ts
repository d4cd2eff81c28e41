import { describe, expect, it } from 'vitest';
import { safeReturnUrl } from './guards';

describe('where the console goes after sign-in', () => {
  it('goes back to a page of the console', () => {
    expect(safeReturnUrl('/clusters/c-1/nodes?status=attention')).toBe('/clusters/c-1/nodes?status=attention');
  });

  it.each(['https://evil.example/', '//evil.example/', '/\\evil.example', 'javascript:alert(1)', '/sign-in?returnUrl=/x', '', null, undefined])('goes to the start page instead of %s', (value) => {
    expect(safeReturnUrl(value)).toBe('/');
  });
});
