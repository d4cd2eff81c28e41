import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error';
import { metadataFieldLabels } from './resources/field-labels';
import { POD_FIELD_LABELS } from './resources/pods';
import { labelSelectorFromObject, parseFieldSelector, parseLabelSelector } from './selectors';

const labels = { app: 'web', tier: 'front', version: '3' };

describe('label selectors', () => {
  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app=db', false],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app notin (web)', false],
    ['missing notin (web)', true],
    ['tier', true],
    ['!tier', false],
    ['!missing', true],
    ['app=web,tier=front', true],
    ['app=web, tier in (back)', false],
    ['version>2', true],
    ['version<3', false],
  ])('%s matches: %s', (selector, expected) => {
    expect(parseLabelSelector(selector).matches(labels)).toBe(expected);
  });

  it.each(['app in ()', 'app in (a', 'app = = b', '=x', 'a b'])('rejects %s with a 400', (selector) => {
    const error = (() => {
      try {
        parseLabelSelector(selector);
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status.code).toBe(400);
  });

  it('turns matchLabels and matchExpressions into a selector; a missing selector matches nothing', () => {
    const selector = labelSelectorFromObject({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }, { key: 'x', operator: 'DoesNotExist' }] });
    expect(selector.matches(labels)).toBe(true);
    expect(selector.matches({ app: 'web', tier: 'back' })).toBe(false);
    expect(labelSelectorFromObject(undefined).matches(labels)).toBe(false);
    expect(labelSelectorFromObject({}).matches(labels)).toBe(true);
  });
});

describe('field selectors', () => {
  const fields = { ...metadataFieldLabels(true), ...POD_FIELD_LABELS };
  const pod = { metadata: { name: 'p1', namespace: 'ns' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } };

  it('matches equality and inequality terms', () => {
    expect(parseFieldSelector('spec.nodeName=n1', fields).matches(pod)).toBe(true);
    expect(parseFieldSelector('spec.nodeName==n2', fields).matches(pod)).toBe(false);
    expect(parseFieldSelector('status.phase!=Succeeded,metadata.namespace=ns', fields).matches(pod)).toBe(true);
    expect(parseFieldSelector('spec.nodeName=', fields).matches({ metadata: { name: 'x' } })).toBe(true);
  });

  it('exposes the value of an equality term for index lookups', () => {
    expect(parseFieldSelector('spec.nodeName=n1,status.phase!=Failed', fields).equalityValue('spec.nodeName')).toBe('n1');
    expect(parseFieldSelector('spec.nodeName!=n1', fields).equalityValue('spec.nodeName')).toBeUndefined();
  });

  it('refuses labels the resource does not support, like the API server', () => {
    expect(() => parseFieldSelector('spec.foo=bar', fields)).toThrow('field label not supported: spec.foo');
  });
});
