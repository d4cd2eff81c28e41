import { DOCUMENT } from '@angular/common';
import { DestroyRef, Injectable, computed, effect, inject, signal } from '@angular/core';
import { ROLES, type Role, roleAllows } from '@ccos/shared/domain';

export interface SessionUser {
  readonly id: string;
  readonly username: string;
  readonly role: Role;
}

export interface SessionData {
  readonly token: string;
  /** ISO 8601 */
  readonly expiresAt: string;
  readonly user: SessionUser;
}

/** Why the user is signed out: never signed in, signed out on purpose, or the token ran out or was refused. */
export type SignedOutReason = 'none' | 'signed-out' | 'expired';

const STORAGE_KEY = 'ccos.session';
/** Why the last session ended, written before the session is removed so the other tabs can tell. */
const ENDED_KEY = 'ccos.session.ended';
/** setTimeout's limit (about 24.8 days); a longer session re-arms the timer when it fires. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The signed-in user and their bearer token, kept in localStorage so every tab of the
 * browser shares one session: signing in or out in one tab does so in all of them (the
 * others hear of it through the `storage` event), and a reload keeps it. State only: no
 * network, so the Apollo links can read it without a dependency cycle.
 */
@Injectable({ providedIn: 'root' })
export class Session {
  private readonly window = inject(DOCUMENT).defaultView;
  private readonly storage = localStorageOf(this.window);
  private readonly state = signal<SessionData | null>(this.restore());
  private readonly reason = signal<SignedOutReason>('none');

  readonly user = computed(() => this.state()?.user ?? null);
  readonly token = computed(() => this.state()?.token ?? null);
  readonly signedIn = computed(() => this.state() !== null);
  readonly signedOutReason = this.reason.asReadonly();
  /** Counts the times another tab signed in as someone else (or out): what this tab has cached is not this user's. */
  readonly otherTabChanges = signal(0);

  constructor() {
    // Another tab signed in, out, or took the current role: so does this one.
    const followOtherTabs = (event: StorageEvent) => {
      if (event.storageArea === this.storage && (event.key === STORAGE_KEY || event.key === null)) {
        this.adopt(parseSession(event.newValue));
      }
    };
    this.window?.addEventListener('storage', followOtherTabs);
    inject(DestroyRef).onDestroy(() => this.window?.removeEventListener('storage', followOtherTabs));
    // Ends the session when its token expires, so the user is asked to sign in before a request fails.
    effect((onCleanup) => {
      const session = this.state();
      if (!session) {
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        const left = Date.parse(session.expiresAt) - Date.now();
        if (left <= 0) {
          this.expire();
        } else {
          timer = setTimeout(arm, Math.min(MAX_TIMER_MS, left));
        }
      };
      arm();
      onCleanup(() => clearTimeout(timer));
    });
  }

  /** Whether the signed-in user holds `role` or a stronger one. */
  allows(role: Role): boolean {
    const user = this.user();
    return user !== null && roleAllows(user.role, role);
  }

  start(session: SessionData): void {
    this.write(session);
    this.reason.set('none');
    this.state.set(session);
  }

  /** Takes the user's current name and role from the API, keeping the token. */
  updateUser(user: SessionUser): void {
    const session = this.state();
    if (!session || session.user.id !== user.id) {
      return;
    }
    if (session.user.username !== user.username || session.user.role !== user.role) {
      const updated = { ...session, user: { id: user.id, username: user.username, role: user.role } };
      this.write(updated);
      this.state.set(updated);
    }
  }

  signOut(): void {
    this.end('signed-out');
  }

  /** The token ran out or the API refused it. */
  expire(): void {
    if (this.state()) {
      this.end('expired');
    }
  }

  private end(reason: SignedOutReason): void {
    this.write(null, reason);
    this.reason.set(reason);
    this.state.set(null);
  }

  /** What another tab stored: its session (the same or a new one), or none any more. */
  private adopt(stored: SessionData | null): void {
    const current = this.state();
    if (stored && Date.parse(stored.expiresAt) > Date.now()) {
      if (stored.token !== current?.token || stored.user.role !== current.user.role || stored.user.username !== current.user.username) {
        if (stored.user.id !== current?.user.id) {
          this.otherTabChanges.update((count) => count + 1);
        }
        this.reason.set('none');
        this.state.set(stored);
      }
      return;
    }
    if (current) {
      this.otherTabChanges.update((count) => count + 1);
      this.reason.set(this.storage?.getItem(ENDED_KEY) === 'expired' ? 'expired' : 'signed-out');
      this.state.set(null);
    }
  }

  private write(session: SessionData | null, reason: SignedOutReason = 'none'): void {
    try {
      if (session) {
        this.storage?.setItem(STORAGE_KEY, JSON.stringify(session));
        this.storage?.removeItem(ENDED_KEY);
      } else {
        this.storage?.setItem(ENDED_KEY, reason);
        this.storage?.removeItem(STORAGE_KEY);
      }
    } catch {
      // Blocked storage: the session then lasts until the next reload, in this tab only.
    }
  }

  private restore(): SessionData | null {
    try {
      const stored = parseSession(this.storage?.getItem(STORAGE_KEY) ?? null);
      if (stored && Date.parse(stored.expiresAt) > Date.now()) {
        return stored;
      }
      this.storage?.removeItem(STORAGE_KEY);
    } catch {
      // fall through: no usable session
    }
    return null;
  }
}

/** Reads a stored session, rejecting anything that does not have the expected shape. */
export function parseSession(text: string | null): SessionData | null {
  if (!text) {
    return null;
  }
  try {
    const value = JSON.parse(text) as Partial<SessionData> | null;
    const user = value?.user;
    const valid =
      typeof value?.token === 'string' &&
      typeof value.expiresAt === 'string' &&
      !Number.isNaN(Date.parse(value.expiresAt)) &&
      typeof user?.id === 'string' &&
      typeof user.username === 'string' &&
      (ROLES as readonly string[]).includes(user.role as string);
    return valid ? (value as SessionData) : null;
  } catch {
    return null;
  }
}

function localStorageOf(window: Window | null): Storage | null {
  try {
    return window?.localStorage ?? null;
  } catch {
    return null;
  }
}
