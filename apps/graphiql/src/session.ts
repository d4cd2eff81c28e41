/**
 * The sign-in the console keeps in localStorage (`ccos.session`, same origin, same shape), so
 * one sign-in serves the console and this IDE, in every tab.
 */
export interface IdeSession {
  readonly token: string;
  /** ISO 8601 */
  readonly expiresAt: string;
  readonly user: { readonly id: string; readonly username: string; readonly role: string };
}

const STORAGE_KEY = 'ccos.session';
const ENDED_KEY = 'ccos.session.ended';

export function readSession(): IdeSession | null {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<IdeSession> | null;
    if (typeof value?.token !== 'string' || typeof value.expiresAt !== 'string' || typeof value.user?.username !== 'string') {
      return null;
    }
    return Date.parse(value.expiresAt) > Date.now() ? (value as IdeSession) : null;
  } catch {
    return null;
  }
}

export function saveSession(session: IdeSession): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  localStorage.setItem(ENDED_KEY, 'signed-out');
  localStorage.removeItem(STORAGE_KEY);
}

/** Calls `listener` when another tab (the console or this IDE) signs in or out. */
export function onSessionChange(listener: () => void): () => void {
  const handler = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY || event.key === null) {
      listener();
    }
  };
  window.addEventListener('storage', handler);
  return () => window.removeEventListener('storage', handler);
}
