/** The languages the console speaks. English is the source language of every catalog. */
export const LANGUAGES = ['en', 'zh'] as const;
export type Language = (typeof LANGUAGES)[number];

/** `{name}` placeholders of a message, as a union of their names. */
type Placeholders<S extends string> = S extends `${string}{${infer Name}}${infer Rest}` ? Name | Placeholders<Rest> : never;

type UnionToIntersection<U> = (U extends unknown ? (arg: U) => void : never) extends (arg: infer I) => void ? I : never;

/** A translation must keep every placeholder of its English source. */
type Translation<S extends string> = [Placeholders<S>] extends [never] ? string : UnionToIntersection<Placeholders<S> extends infer P extends string ? `${string}{${P}}${string}` : never>;

/** The arguments after the key: none for a plain message, one object naming every placeholder otherwise. */
export type MessageParams<S extends string> = [Placeholders<S>] extends [never] ? [] : [params: Record<Placeholders<S>, string | number>];

/**
 * English messages and their Chinese translations. The type guarantees that both have
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
