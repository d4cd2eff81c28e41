import { describe, expect, it } from 'vitest';
import { defineCatalog, fillPlaceholders } from './catalog';

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
