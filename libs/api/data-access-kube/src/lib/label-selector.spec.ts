import type { V1LabelSelector } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { selectorMatches } from './label-selector';

const labels = { app: 'db', tier: 'backend' };

describe('selectorMatches', () => {
  it.each<[string, V1LabelSelector | undefined, boolean]>([
    ['a missing selector matches nothing', undefined, false],
    ['an empty selector matches everything', {}, true],
    ['matchLabels equal', { matchLabels: { app: 'db' } }, true],
    ['matchLabels differ', { matchLabels: { app: 'web' } }, false],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend', 'cache'] }] }, true],
    ['In without the label', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['frontend'] }] }, true],
    ['NotIn without the label', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    ['labels and expressions together', { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['frontend'] }] }, false],
    ['an unknown operator', { matchExpressions: [{ key: 'app', operator: 'Gt', values: ['1'] }] }, false],
  ])('%s', (_name, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });
});
