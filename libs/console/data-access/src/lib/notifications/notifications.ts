import { Injectable, signal } from '@angular/core';

export type NotificationTone = 'success' | 'info' | 'error';

/** A text, or a function giving it in the current language (so an open toast follows a language switch). */
export type NotificationText = string | (() => string);

export interface Notification {
  readonly id: number;
  readonly tone: NotificationTone;
  readonly title: () => string;
  readonly message: () => string;
}

/** How long a toast stays; errors stay until dismissed, so nobody misses one. */
const LIFETIME_MS: Record<NotificationTone, number | null> = { success: 6000, info: 8000, error: null };
const MAX_SHOWN = 5;

/** The toasts on screen; the app root renders them. */
@Injectable({ providedIn: 'root' })
export class Notifications {
  private nextId = 1;
  private readonly shown = signal<readonly Notification[]>([]);
  readonly items = this.shown.asReadonly();

  show(tone: NotificationTone, title: NotificationText, message: NotificationText = ''): void {
    const item: Notification = { id: this.nextId, tone, title: textOf(title), message: textOf(message) };
    // The same error from several operations at once shows once.
    if (this.shown().some((other) => other.tone === tone && other.title() === item.title() && other.message() === item.message())) {
      return;
    }
    this.nextId += 1;
    this.shown.update((items) => [...items, item].slice(-MAX_SHOWN));
    const lifetime = LIFETIME_MS[tone];
    if (lifetime !== null) {
      setTimeout(() => this.dismiss(item.id), lifetime);
    }
  }

  dismiss(id: number): void {
    this.shown.update((items) => items.filter((item) => item.id !== id));
  }

  clear(): void {
    this.shown.set([]);
  }
}

function textOf(text: NotificationText): () => string {
  return typeof text === 'function' ? text : () => text;
}
