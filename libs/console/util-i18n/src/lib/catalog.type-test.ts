/**
 * Compile-time checks of the catalog guarantees, run by the `typecheck` target: each
 * `@ts-expect-error` line must fail to compile, so if a guarantee is lost, typecheck fails.
 * Nothing imports this file; it never reaches a bundle.
 */
import { defineCatalog } from './catalog';
import type { I18n } from './i18n';

const sample = defineCatalog({ en: { greeting: 'Hello {name}, {count} new', plain: 'Plain' }, zh: { greeting: '你好 {name}，{count} 条新消息', plain: '普通' } });

// @ts-expect-error a Chinese entry is missing
defineCatalog({ en: { a: 'x', b: 'y' }, zh: { a: 'x' } });
// @ts-expect-error a Chinese entry has no English source
defineCatalog({ en: { a: 'x' }, zh: { a: 'x', extra: 'z' } });
// @ts-expect-error the translation dropped a placeholder
defineCatalog({ en: { a: 'Hi {name}' }, zh: { a: '你好' } });

export function checkTranslator(i18n: I18n): string[] {
  const t = i18n.translator(sample);
  return [
    t('plain'),
    t('greeting', { name: 'x', count: 1 }),
    // @ts-expect-error placeholders need their values
    t('greeting'),
    // @ts-expect-error unknown key
    t('missing'),
    // @ts-expect-error a plain message takes no values
    t('plain', { x: 1 }),
  ];
}

const plurals = defineCatalog({
  en: { shown: '{shown} of {total, plural, one {# node} other {# nodes}} shown' },
  zh: { shown: '显示 {shown} / {total} 个节点' },
});
// @ts-expect-error the translation dropped the plural's argument
defineCatalog({ en: { a: '{total, plural, one {# node} other {# nodes}}' }, zh: { a: '节点' } });

export function checkPlurals(i18n: I18n): string {
  return i18n.translator(plurals)('shown', { shown: 1, total: 1 });
}
