import { DOCUMENT } from '@angular/common';
import { TestBed } from '@angular/core/testing';
import { describe, expect, it } from 'vitest';
import { FakeBrowser } from '../testing';
import { defineCatalog } from './catalog';
import { I18n } from './i18n';

/** A fresh page load in a tab of `browser` (a browser of its own by default). */
function i18nIn(options: { readonly languages?: readonly string[]; readonly browser?: FakeBrowser } = {}) {
  TestBed.resetTestingModule();
  const tab = (options.browser ?? new FakeBrowser()).openTab(options);
  TestBed.configureTestingModule({ providers: [{ provide: DOCUMENT, useValue: tab.document }] });
  const i18n = TestBed.inject(I18n);
  TestBed.tick();
  return { i18n, tab };
}

const HAN = /[\u4e00-\u9fff]/;

describe('the console’s language', () => {
  it('follows the browser’s language at first, and says so in <html lang>', () => {
    expect(i18nIn({ languages: ['zh-CN', 'en'] }).i18n.language()).toBe('zh');
    const { i18n, tab } = i18nIn({ languages: ['de-DE', 'zh-CN'] });
    expect(i18n.language()).toBe('en');
    expect(tab.document.documentElement.lang).toBe('en');
  });

  it('remembers a choice over the browser’s language, for the next visit', () => {
    const browser = new FakeBrowser();
    const first = i18nIn({ languages: ['en-US'], browser });
    first.i18n.setLanguage('zh');
    TestBed.tick();
    expect(first.tab.document.documentElement.lang).toBe('zh-CN');
    expect(i18nIn({ languages: ['en-US'], browser }).i18n.language()).toBe('zh');
  });

  it('translates a catalogue key in the current language, with ICU plurals in English', () => {
    const { i18n } = i18nIn();
    const t = i18n.translator(defineCatalog({ en: { shown: '{count, plural, one {# node} other {# nodes}} shown' }, zh: { shown: '显示 {count} 个节点' } }));
    expect(t('shown', { count: 1 })).toBe('1 node shown');
    expect(t('shown', { count: 3 })).toBe('3 nodes shown');
    i18n.setLanguage('zh');
    expect(t('shown', { count: 3 })).toBe('显示 3 个节点');
  });
});

describe('texts the server sends by code', () => {
  it('words a coded text in the user’s language, with the plural its count needs', () => {
    const { i18n } = i18nIn();
    expect(i18n.server('agent.preflight.passed', { count: 1 }, 'server text')).toBe('all 1 preflight check passed');
    expect(i18n.server('agent.preflight.passed', { count: 6 }, 'server text')).toBe('all 6 preflight checks passed');
    i18n.setLanguage('zh');
    const chinese = i18n.server('agent.preflight.passed', { count: 6 }, 'all 6 preflight checks passed');
    expect(chinese).toMatch(HAN);
    expect(chinese).toContain('6');
    expect(i18n.messageLocale()).toBe('zh-CN');
  });

  it('shows the server’s own text for a code this console does not know, and nothing when there is neither', () => {
    const { i18n } = i18nIn({ languages: ['zh-CN'] });
    expect(i18n.server('agent.fromANewerServer', { count: 1 }, 'something new happened')).toBe('something new happened');
    expect(i18n.server(null, null, 'plain server text')).toBe('plain server text');
    expect(i18n.server(undefined, undefined, undefined)).toBe('');
  });
});

describe('times, durations and sizes', () => {
  it('rounds a duration to what matters, with Chinese units in Chinese', () => {
    const { i18n } = i18nIn();
    const cases: Array<[number, string, string]> = [
      [42_400, '42 s', '42 秒'],
      [185_000, '3 min 5 s', '3 分 5 秒'],
      [180_000, '3 min', '3 分'],
      [2 * 3_600_000 + 10 * 60_000, '2 h 10 min', '2 小时 10 分'],
      [72 * 3_600_000, '3 d', '3 天'],
      [-5_000, '0 s', '0 秒'],
    ];
    for (const [milliseconds, english] of cases) {
      expect(i18n.formatDuration(milliseconds)).toBe(english);
    }
    i18n.setLanguage('zh');
    for (const [milliseconds, , chinese] of cases) {
      expect(i18n.formatDuration(milliseconds)).toBe(chinese);
    }
  });

  it('shows sizes in binary units, and nothing for an unknown size', () => {
    const { i18n } = i18nIn();
    expect(i18n.formatBytes(512)).toBe('512 B');
    expect(i18n.formatBytes(1536 * 1024 * 1024)).toBe('1.5 GiB');
    expect(i18n.formatBytes(200 * 1024 * 1024)).toBe('200 MiB');
    expect(i18n.formatBytes(null)).toBe('');
    expect(i18n.formatBytes(Number.NaN)).toBe('');
  });

  it('shows a time of day with seconds, and an unreadable timestamp as it came', () => {
    const { i18n } = i18nIn();
    const at = '2026-11-30T05:17:09.000Z';
    const local = new Date(at);
    const expected = [local.getHours(), local.getMinutes(), local.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
    expect(i18n.formatTime(at)).toBe(expected);
    expect(i18n.formatTime('not a time')).toBe('not a time');
    expect(i18n.formatTime(null)).toBe('');
    expect(i18n.formatDateTime(undefined)).toBe('');
  });
});
