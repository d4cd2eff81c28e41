import { IntlMessageFormat } from 'intl-messageformat';
import { EN, type MessageCode } from './catalogue.en';
import { ZH_CN } from './catalogue.zh-cn';

/** The locales the catalogue speaks. English is the source of every message. */
export const MESSAGE_LOCALES = ['en', 'zh-CN'] as const;
export type MessageLocale = (typeof MESSAGE_LOCALES)[number];

/** A parameter: a value shown as it is (data), a nested message, or a list of messages. */
export type MessageParam = string | number | boolean | null | Message | readonly Message[];
export type MessageParams = { readonly [name: string]: MessageParam };

/** A text by its stable code and its parameters; what the server stores and sends next to the English text. */
export interface Message {
  readonly code: MessageCode;
  readonly params: MessageParams;
}

/** A message together with its English text, the shape a server field takes (`message`, `reason`, …). */
export interface CodedText extends Message {
  readonly message: string;
}

const CATALOGUES: Readonly<Record<MessageLocale, Readonly<Record<MessageCode, string>>>> = { en: EN, 'zh-CN': ZH_CN };

/** How a list of messages is joined in each language. */
const LIST_SEPARATOR: Readonly<Record<MessageLocale, string>> = { en: '; ', 'zh-CN': '；' };

const compiled = new Map<string, IntlMessageFormat>();

export function isMessageCode(value: unknown): value is MessageCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(EN, value);
}

export function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && isMessageCode((value as { code?: unknown }).code) && typeof (value as { params?: unknown }).params === 'object';
}

/** The template of a code in a locale (the English one when the locale lacks it). */
export function templateOf(locale: MessageLocale, code: MessageCode): string {
  return CATALOGUES[locale][code] ?? EN[code];
}

/**
 * Formats a message in a locale. Nested messages in the parameters are formatted in the same
 * locale; lists of messages are joined. A value that is neither stays as it is: it is data
 * (a host name, a pod name, an output tail).
 */
export function formatMessage(locale: MessageLocale, code: MessageCode, params: MessageParams = {}): string {
  const key = `${locale}\u0000${code}`;
  let format = compiled.get(key);
  if (!format) {
    format = new IntlMessageFormat(templateOf(locale, code), locale, undefined, { ignoreTag: true });
    compiled.set(key, format);
  }
  const values: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(params)) {
    values[name] = formatParam(locale, value);
  }
  const text = format.format(values);
  return typeof text === 'string' ? text : String(text);
}

/**
 * Formats what the server sent: the code and parameters when the catalogue knows the code,
 * otherwise the server's own (English) text. Clients older or newer than the server keep working.
 */
export function formatServerText(locale: MessageLocale, code: string | null | undefined, params: unknown, fallback: string | null | undefined): string {
  if (isMessageCode(code)) {
    try {
      return formatMessage(locale, code, isParams(params) ? params : {});
    } catch {
      return fallback ?? code;
    }
  }
  return fallback ?? '';
}

/** A message with its English text. */
export function message(code: MessageCode, params: MessageParams = {}): CodedText {
  return { code, params, message: formatMessage('en', code, params) };
}

/** The message without its text (what goes into a column of parameters, or into a nested parameter). */
export function bare(text: Message): Message {
  return { code: text.code, params: text.params };
}

/** The catalogue's locale for a POSIX locale name (`LANG=zh_CN.UTF-8`) or a BCP 47 tag (`zh-CN`, `zh`). */
export function localeOf(value: string | null | undefined): MessageLocale {
  return (value ?? '').toLowerCase().replace('_', '-').startsWith('zh') ? 'zh-CN' : 'en';
}

function formatParam(locale: MessageLocale, value: MessageParam): string | number {
  if (value === null) {
    return '';
  }
  if (typeof value === 'number' || typeof value === 'string') {
    return value;
  }
  if (typeof value === 'boolean') {
    return String(value);
  }
  if (Array.isArray(value)) {
    return (value as readonly Message[]).map((item) => (isMessage(item) ? formatMessage(locale, item.code, item.params) : String(item))).join(LIST_SEPARATOR[locale]);
  }
  const nested = value as Message;
  return isMessage(nested) ? formatMessage(locale, nested.code, nested.params) : JSON.stringify(value);
}

function isParams(value: unknown): value is MessageParams {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
