import { describe, expect, it } from 'vitest';
import { defineCatalog, fillPlaceholders, formatIcu } from './catalog';

describe('message catalogues', () => {
  it('fills placeholders and leaves unknown ones visible', () => {
    expect(fillPlaceholders('{count} of {total} nodes', { count: 1, total: 3 })).toBe('1 of 3 nodes');
    expect(fillPlaceholders('Node {name} removed by {actor}', { name: 'w-1' })).toBe('Node w-1 removed by {actor}');
    expect(fillPlaceholders('no placeholders', undefined)).toBe('no placeholders');
  });

  it('does not read a value as a pattern', () => {
    expect(fillPlaceholders('Host {name}', { name: '$& {name} $1' })).toBe('Host $& {name} $1');
  });

  it('keeps both languages of a catalogue', () => {
    const catalog = defineCatalog({ en: { hello: 'Hello {name}' }, zh: { hello: '你好 {name}' } });
    expect(catalog.zh.hello).toBe('你好 {name}');
  });
});

describe('ICU messages', () => {
  it('chooses the plural form by count, and Chinese needs none', () => {
    const template = '{shown} of {total, plural, one {# node} other {# nodes}} shown';
    expect(formatIcu(template, 'en', { shown: 1, total: 1 })).toBe('1 of 1 node shown');
    expect(formatIcu(template, 'en', { shown: 2, total: 3 })).toBe('2 of 3 nodes shown');
    expect(formatIcu('显示 {shown} / {total} 个节点', 'zh-CN', { shown: 1, total: 1 })).toBe('显示 1 / 1 个节点');
  });

  it('shows a template with a missing value instead of failing', () => {
    expect(formatIcu('Node {name} removed by {actor}', 'en', { name: 'w-1' })).toBe('Node w-1 removed by {actor}');
  });
});
