import { describe, expect, it } from 'vitest';
import { columnTitles, languageOf, translator } from './messages';

describe('messages', () => {
  it.each([
    [{ LANG: 'zh_CN.UTF-8' }, 'zh'],
    [{ LANG: 'zh_TW.UTF-8' }, 'zh'],
    [{ LANG: 'en_US.UTF-8' }, 'en'],
    [{ LANG: 'zh_CN.UTF-8', LC_ALL: 'C' }, 'en'],
    [{ LC_MESSAGES: 'zh_CN.UTF-8', LANG: 'en_US.UTF-8' }, 'zh'],
    [{}, 'en'],
  ])('%o speaks %s', (env, language) => {
    expect(languageOf(env)).toBe(language);
  });

  it('fills in parameters and leaves unknown ones visible', () => {
    expect(translator('en')('nodeNotFound', { node: 'h1' })).toBe('no node "h1"');
    expect(translator('zh')('nodeNotFound', { node: 'h1' })).toBe('没有节点“h1”');
    expect(translator('en')('nodeNotFound')).toBe('no node "{node}"');
  });

  it('has a Chinese heading for every English one', () => {
    const titles = columnTitles('zh');
    expect(Object.keys(titles)).toEqual(Object.keys(columnTitles('en')));
    expect(titles['HOSTNAME']).toBe('主机名');
  });
});
