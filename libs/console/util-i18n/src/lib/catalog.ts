import { IntlMessageFormat } from 'intl-messageformat';

/** The languages the console speaks. English is the source language of every catalog. */
export const LANGUAGES = ['en', 'zh'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The argument an ICU `{…}` opens: `count` of `{count, plural, …}`; nothing for a plural branch such as `{# nodes}`. */
type ArgumentName<N extends string> = N extends `{${infer Inner}`
  ? ArgumentName<Inner>
  : N extends `${infer Head},${string}`
    ? Head
    : N extends `${string} ${string}` | `#${string}` | ''
      ? never
      : N;

/** The ICU arguments of a message (`{name}`, `{count, plural, …}`), as a union of their names. */
type Placeholders<S extends string> = S extends `${string}{${infer Name}}${infer Rest}` ? ArgumentName<Name> | Placeholders<Rest> : never;

/** A translation must keep every argument of its English source (plain, or as a plural or select). */
type Translation<S extends string> = [Placeholders<S>] extends [never] ? string : EveryArgument<Placeholders<S>>;

/** A string that has each of the arguments `P`, each as `{p}` or `{p, …}`. */
type EveryArgument<P extends string> = (P extends unknown ? (arg: `${string}{${P}}${string}` | `${string}{${P},${string}`) => void : never) extends (arg: infer I) => void ? I : never;

/** The arguments after the key: none for a plain message, one object naming every placeholder otherwise. */
export type MessageParams<S extends string> = [Placeholders<S>] extends [never] ? [] : [params: Record<Placeholders<S>, string | number>];

/**
 * English messages and their Chinese translations, in ICU message format (plurals:
 * `{count, plural, one {# node} other {# nodes}}`). The type guarantees that both have
 * exactly the same keys and that each translation keeps its placeholders.
 */
export interface Catalog<E extends Record<string, string>> {
  readonly en: E;
  readonly zh: { readonly [K in keyof E]: Translation<E[K]> };
}

/** Looks a key up in the current language, filling in its placeholders. */
export type Translate<E extends Record<string, string>> = <K extends keyof E & string>(key: K, ...params: MessageParams<E[K]>) => string;

/**
 * Declares a feature's messages. Keys and placeholders come from the English side; a
 * missing, extra or placeholder-dropping Chinese entry is a compile error.
 *
 * @example
 * const messages = defineCatalog({
 *   en: { registered: 'Cluster {name} registered' },
 *   zh: { registered: '集群 {name} 已注册' },
 * });
 */
export function defineCatalog<const E extends Record<string, string>>(catalog: {
  readonly en: E;
  readonly zh: { readonly [K in keyof NoInfer<E>]: Translation<NoInfer<E>[K]> };
}): Catalog<E> {
  return catalog;
}

/** Replaces `{name}` with `params.name`; unknown placeholders stay visible so a mistake shows. */
export function fillPlaceholders(template: string, params: Record<string, string | number> | undefined): string {
  if (!params) {
    return template;
  }
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

const compiled = new Map<string, IntlMessageFormat>();

/**
 * Formats an ICU message in `locale`. A message that does not parse, or misses a value, falls
 * back to plain placeholder filling, so a mistake shows instead of breaking the page.
 */
export function formatIcu(template: string, locale: string, params: Record<string, string | number> | undefined): string {
  if (!template.includes('{')) {
    return template;
  }
  const key = `${locale}\u0000${template}`;
  try {
    let format = compiled.get(key);
    if (!format) {
      format = new IntlMessageFormat(template, locale, undefined, { ignoreTag: true });
      compiled.set(key, format);
    }
    const text = format.format(params ?? {});
    return typeof text === 'string' ? text : String(text);
  } catch {
    return fillPlaceholders(template, params);
  }
}
