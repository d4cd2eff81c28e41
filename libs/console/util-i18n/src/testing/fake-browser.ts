/** localStorage as a browser keeps it for one origin: shared by every tab of that browser. */
export class FakeStorage implements Storage {
  private readonly items = new Map<string, string>();

  get length(): number {
    return this.items.size;
  }

  clear(): void {
    this.items.clear();
  }

  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }

  key(index: number): string | null {
    return [...this.items.keys()][index] ?? null;
  }

  removeItem(key: string): void {
    this.items.delete(key);
  }

  setItem(key: string, value: string): void {
    this.items.set(key, String(value));
  }
}

/** A browser tab as the console's services see it through `DOCUMENT`: `<html lang>`, localStorage, navigator and `storage` events. */
export interface FakeTab {
  readonly document: Document;
  readonly storage: FakeStorage;
  /** Writes `key` as another tab would: the storage changes and this tab hears a `storage` event. */
  changeFromOtherTab(key: string, value: string | null): void;
}

/**
 * A tab of a browser whose other tabs share `storage`; `languages` is `navigator.languages`.
 * Only what the services use is there (Node has no DOM).
 */
export function fakeTab(options: { readonly languages?: readonly string[]; readonly storage?: FakeStorage } = {}): FakeTab {
  const storage = options.storage ?? new FakeStorage();
  const events = new EventTarget();
  const window = {
    localStorage: storage,
    navigator: { languages: options.languages ?? ['en-US'], language: options.languages?.[0] ?? 'en-US' },
    location: { protocol: 'http:', host: 'console.test', origin: 'http://console.test' },
    addEventListener: events.addEventListener.bind(events),
    removeEventListener: events.removeEventListener.bind(events),
  };
  const document = { documentElement: { lang: '' }, defaultView: window, location: window.location } as unknown as Document;
  return {
    document,
    storage,
    changeFromOtherTab(key, value) {
      const oldValue = storage.getItem(key);
      if (value === null) {
        storage.removeItem(key);
      } else {
        storage.setItem(key, value);
      }
      events.dispatchEvent(Object.assign(new Event('storage'), { key, oldValue, newValue: value, storageArea: storage }));
    },
  };
}
