import { DOCUMENT } from '@angular/common';
import { Injectable, effect, inject, signal } from '@angular/core';
import { type MessageLocale, formatServerText } from '@ccos/shared/messages';
import { type Catalog, LANGUAGES, type Language, type MessageParams, type Translate, formatIcu } from './catalog';

const STORAGE_KEY = 'ccos.language';

/** BCP 47 tags for `<html lang>`, Intl formatting and the server's message catalogue. */
const LOCALES: Record<Language, MessageLocale> = { en: 'en', zh: 'zh-CN' };

/** Duration units; Chinese writes them without spaces. */
const UNITS: Record<Language, { readonly s: string; readonly min: string; readonly h: string; readonly d: string; readonly gap: string }> = {
  en: { s: ' s', min: ' min', h: ' h', d: ' d', gap: ' ' },
  zh: { s: ' 秒', min: ' 分', h: ' 小时', d: ' 天', gap: ' ' },
};

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
  private readonly timeFormats = new Map<Language, Intl.DateTimeFormat>();

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
      const language = this.current();
      const messages = catalog[language] as Record<string, string>;
      return formatIcu(messages[key] ?? catalog.en[key], LOCALES[language], params[0]);
    };
  }

  /**
   * A text the server produced, in the current language: from its message code and parameters
   * (libs/shared/messages) when it has them, else the server's own text (reactive, like `translator`).
   */
  server(code: string | null | undefined, params: unknown, fallback: string | null | undefined): string {
    return formatServerText(LOCALES[this.current()], code, params, fallback);
  }

  /** The current language as the message catalogue names it. */
  messageLocale(): MessageLocale {
    return LOCALES[this.current()];
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

  /** Time of day with seconds, e.g. "05:17:09", for event logs. */
  formatTime(iso: string | null | undefined): string {
    if (!iso) {
      return '';
    }
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) {
      return iso;
    }
    const language = this.current();
    let format = this.timeFormats.get(language);
    if (!format) {
      format = new Intl.DateTimeFormat(LOCALES[language], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
      this.timeFormats.set(language, format);
    }
    return format.format(date);
  }

  /** A length of time, rounded to what matters: "42 s", "3 min 5 s", "2 h 10 min" (秒/分/小时 in Chinese). */
  formatDuration(milliseconds: number): string {
    const seconds = Math.max(0, Math.round(milliseconds / 1000));
    const units = UNITS[this.current()];
    if (seconds < 60) {
      return `${seconds}${units.s}`;
    }
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) {
      const rest = seconds % 60;
      return rest ? `${minutes}${units.min}${units.gap}${rest}${units.s}` : `${minutes}${units.min}`;
    }
    const hours = Math.floor(minutes / 60);
    if (hours < 48) {
      const rest = minutes % 60;
      return rest ? `${hours}${units.h}${units.gap}${rest}${units.min}` : `${hours}${units.h}`;
    }
    return `${Math.floor(hours / 24)}${units.d}`;
  }

  /** A byte count in binary units, e.g. "1.5 GiB". */
  formatBytes(bytes: number | null | undefined): string {
    if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) {
      return '';
    }
    const steps = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = bytes;
    let step = 0;
    while (value >= 1024 && step < steps.length - 1) {
      value /= 1024;
      step += 1;
    }
    const digits = step === 0 || value >= 100 ? 0 : 1;
    return `${new Intl.NumberFormat(LOCALES[this.current()], { maximumFractionDigits: digits }).format(value)} ${steps[step]}`;
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
