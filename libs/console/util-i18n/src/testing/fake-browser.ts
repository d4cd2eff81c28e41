/** A browser tab as the console's services see it through `DOCUMENT`: `<html lang>`, localStorage, navigator and `storage` events. */
export interface FakeTab {
  readonly document: Document;
  /** This tab's localStorage: one store for every tab of the browser. */
  readonly storage: Storage;
}

/**
 * One browser profile (one origin): its tabs share localStorage, and a write in one tab reaches
 * the others as a `storage` event, as in a browser (the writing tab hears nothing). Only what the
 * console's services use is there: Node has no DOM.
 */
export class FakeBrowser {
  private readonly items = new Map<string, string>();
  private readonly tabs: Array<{ readonly storage: Storage; readonly events: EventTarget }> = [];

  openTab(options: { readonly languages?: readonly string[] } = {}): FakeTab {
    const events = new EventTarget();
    const storage = this.storageFor(() => entry);
    const entry = { storage, events };
    this.tabs.push(entry);
    const languages = options.languages ?? ['en-US'];
    const location = { protocol: 'http:', host: 'console.test', origin: 'http://console.test' };
    const window = {
      localStorage: storage,
      navigator: { languages, language: languages[0] ?? 'en-US' },
      location,
      addEventListener: events.addEventListener.bind(events),
      removeEventListener: events.removeEventListener.bind(events),
    };
    const document = { documentElement: { lang: '' }, defaultView: window, location } as unknown as Document;
    return { document, storage };
  }

  private storageFor(writer: () => { readonly storage: Storage }): Storage {
    const items = this.items;
    const changed = (key: string | null, oldValue: string | null, newValue: string | null) => {
      for (const tab of this.tabs) {
        if (tab !== writer()) {
          tab.events.dispatchEvent(Object.assign(new Event('storage'), { key, oldValue, newValue, storageArea: tab.storage }));
        }
      }
    };
    return {
      get length() {
        return items.size;
      },
      clear: () => {
        items.clear();
        changed(null, null, null);
      },
      getItem: (key) => items.get(key) ?? null,
      key: (index) => [...items.keys()][index] ?? null,
      removeItem: (key) => {
        const oldValue = items.get(key) ?? null;
        if (items.delete(key)) {
          changed(key, oldValue, null);
        }
      },
      setItem: (key, value) => {
        const oldValue = items.get(key) ?? null;
        items.set(key, String(value));
        if (oldValue !== String(value)) {
          changed(key, oldValue, String(value));
        }
      },
    };
  }
}

/** A tab of a browser of its own. */
export function fakeTab(options: { readonly languages?: readonly string[] } = {}): FakeTab {
  return new FakeBrowser().openTab(options);
}
