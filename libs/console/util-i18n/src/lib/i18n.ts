import { DOCUMENT } from '@angular/common';
import { Injectable, effect, inject, signal } from '@angular/core';
import { type Catalog, LANGUAGES, type Language, type MessageParams, type Translate, fillPlaceholders } from './catalog';

const STORAGE_KEY = 'ccos.language';

/** BCP 47 tags for `<html lang>` and Intl formatting. */
const LOCALES: Record<Language, string> = { en: 'en', zh: 'zh-CN' };

/**
 * The current language as a signal. Templates that call a translator re-render when it
 * changes, so switching needs no reload. The choice is remembered in localStorage;
 * without one, the browser's language decides.
 */
@Injectable({ providedIn: 'root' })
export class I18n {
  private readonly document = inject(DOCUMENT);
  private readonly storage = storageOf(this.document);
  private readonly dateFormats = new Map<Language, Intl.DateTimeFormat>();

  private readonly current = signal<Language>(this.initialLanguage());
  readonly language = this.current.asReadonly();

  constructor() {
    effect(() => {
      this.document.documentElement.lang = LOCALES[this.current()];
    });
  }

  setLanguage(language: Language): void {
    this.current.set(language);
    try {
      this.storage?.setItem(STORAGE_KEY, language);
    } catch {
      // Storage can be full or blocked; the choice then lasts for this page only.
    }
  }

  /** A function that looks keys of `catalog` up in the current language (reactive: it reads the language signal). */
  translator<E extends Record<string, string>>(catalog: Catalog<E>): Translate<E> {
    return <K extends keyof E & string>(key: K, ...params: MessageParams<E[K]>): string => {
      const messages = catalog[this.current()] as Record<string, string>;
      return fillPlaceholders(messages[key] ?? catalog.en[key], params[0]);
    };
  }

  /** Date and time in the current language, e.g. "Nov 30, 2026, 05:17" or "2026年11月30日 05:17". */
  formatDateTime(iso: string | null | undefined): string {
    if (!iso) {
      return '';
    }
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) {
      return iso;
    }
    const language = this.current();
    let format = this.dateFormats.get(language);
    if (!format) {
      format = new Intl.DateTimeFormat(LOCALES[language], { dateStyle: 'medium', timeStyle: 'short' });
      this.dateFormats.set(language, format);
    }
    return format.format(date);
  }

  private initialLanguage(): Language {
    let stored: string | null = null;
    try {
      stored = this.storage?.getItem(STORAGE_KEY) ?? null;
    } catch {
      stored = null;
    }
    if (isLanguage(stored)) {
      return stored;
    }
    const preferred = this.document.defaultView?.navigator.languages?.[0] ?? this.document.defaultView?.navigator.language ?? 'en';
    return preferred.toLowerCase().startsWith('zh') ? 'zh' : 'en';
  }
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

function storageOf(document: Document): Storage | null {
  try {
    return document.defaultView?.localStorage ?? null;
  } catch {
    return null;
  }
}
