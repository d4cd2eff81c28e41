import { randomUUID } from 'node:crypto';
import type { UserEntity, UserSessionEntity, UserSessionStore } from '@ccos/api/data-access-db';
import { type AuthenticatedUser, type EventBus, type RequestOrigin, type SessionsEndedPayload, TOPICS, type UserChangedPayload } from '@ccos/api/util-graphql';
import type { SessionTokens } from './session-tokens';

export interface SessionLimits {
  /** How long `authenticate` trusts what it read about a session; revocations announced on the event bus take effect at once. */
  readonly cacheMs: number;
  /** Sessions cached at most (oldest forgotten first). */
  readonly cacheEntries: number;
  /** `last_used_at` is written at most this often per session. */
  readonly lastUsedWriteMs: number;
  /** Open sessions per user; a new sign-in beyond it ends the least recently used one. */
  readonly activePerUser: number;
  /** Ended sessions are kept this long (they show when and why a device was signed out), then deleted. */
  readonly keepEndedMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  cacheMs: 5_000,
  cacheEntries: 10_000,
  lastUsedWriteMs: 60_000,
  activePerUser: 50,
  keepEndedMs: 7 * 24 * 3600_000,
};

/** Why a session ended before its time, as stored and shown. */
export type SessionEndReason = 'signed out' | 'signed out by an administrator' | 'signed out elsewhere' | 'password changed' | 'user disabled' | 'too many sessions';

interface CachedSession {
  readonly user: AuthenticatedUser;
  readonly cachedAt: number;
  lastUsedAt: number;
}

/**
 * Sessions: one row per sign-in, named by the bearer token. `authenticate` runs on every
 * request, so it keeps what it read for a few seconds; every revocation is announced on the
 * event bus (SESSIONS_ENDED, USER_CHANGED for a role change) and each replica forgets the
 * sessions concerned at once and closes their live connections.
 */
export class SessionService {
  private readonly cache = new Map<string, CachedSession>();

  constructor(
    private readonly sessions: UserSessionStore,
    private readonly tokens: SessionTokens,
    private readonly events: EventBus,
    private readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Forgets cached sessions whenever any replica announces they ended or their user changed, and
   * all of them when this replica may have missed announcements (its event listener was cut).
   * Returns the function that stops it.
   */
  follow(onError: (error: unknown) => void): () => void {
    const ended = this.events.subscribe(TOPICS.SESSIONS_ENDED)[Symbol.asyncIterator]();
    const changed = this.events.subscribe(TOPICS.USER_CHANGED)[Symbol.asyncIterator]();
    const resumed = this.events.subscribe(TOPICS.EVENTS_RESUMED)[Symbol.asyncIterator]();
    const drain = async (iterator: AsyncIterator<unknown>, handle: (payload: unknown) => void) => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        handle(next.value);
      }
    };
    void drain(ended, (payload) => {
      const { userId, sessionIds } = payload as SessionsEndedPayload;
      this.forget(userId, sessionIds);
    }).catch(onError);
    void drain(changed, (payload) => this.forget((payload as UserChangedPayload).userId)).catch(onError);
    void drain(resumed, () => this.cache.clear()).catch(onError);
    return () => {
      void ended.return?.();
      void changed.return?.();
      void resumed.return?.();
    };
  }

  /** A new session for `user`, who has just proven their password. */
  async start(user: UserEntity, origin: RequestOrigin): Promise<{ token: string; expiresAt: Date; session: UserSessionEntity }> {
    const now = new Date(this.now());
    const expiresAt = new Date(now.getTime() + this.tokens.lifetimeSeconds * 1000);
    await this.sessions.deleteEndedBefore(user.id, new Date(now.getTime() - this.limits.keepEndedMs));
    const session = await this.sessions.insert({
      id: randomUUID(),
      userId: user.id,
      createdAt: now,
      lastUsedAt: now,
      expiresAt,
      sourceAddress: storable(origin.address, 64) ?? 'unknown',
      userAgent: storable(origin.userAgent, 512),
    });
    const open = await this.active(user.id);
    const surplus = open.slice(this.limits.activePerUser).map((excess) => excess.id);
    if (surplus.length > 0) {
      await this.end(user.id, surplus, 'too many sessions');
    }
    return { token: await this.tokens.issue({ userId: user.id, sessionId: session.id }, expiresAt), expiresAt, session };
  }

  /**
   * The user a bearer token stands for, while its session is open and its user enabled. The
   * role is the current one (a changed role counts from the next request, at most
   * `cacheMs` later on a replica that missed the announcement). `fresh`: read from the database
   * whatever is cached.
   */
  async authenticate(token: string, options: { readonly fresh?: boolean } = {}): Promise<AuthenticatedUser | null> {
    const claims = await this.tokens.verify(token);
    if (!claims) {
      return null;
    }
    const now = this.now();
    const cached = this.cache.get(claims.sessionId);
    if (cached && !options.fresh && now - cached.cachedAt < this.limits.cacheMs && cached.user.id === claims.userId && (cached.user.sessionExpiresAt?.getTime() ?? 0) > now) {
      return cached.user;
    }
    this.cache.delete(claims.sessionId);
    const row = await this.sessions.withUser(claims.sessionId);
    if (!row || row.userId !== claims.userId || row.revokedAt !== null || row.userDisabledAt !== null || row.expiresAt.getTime() <= now) {
      return null;
    }
    const user: AuthenticatedUser = { id: row.userId, username: row.username, role: row.role, sessionId: row.id, sessionExpiresAt: row.expiresAt };
    const entry: CachedSession = { user, cachedAt: now, lastUsedAt: row.lastUsedAt.getTime() };
    this.remember(row.id, entry);
    if (now - entry.lastUsedAt >= this.limits.lastUsedWriteMs) {
      entry.lastUsedAt = now;
      await this.sessions.markUsed(row.id, new Date(now));
    }
    return user;
  }

  /** Open sessions of a user, most recently used first. */
  active(userId: string): Promise<UserSessionEntity[]> {
    return this.sessions.openOf(userId, new Date(this.now()));
  }

  findOpen(sessionId: string): Promise<UserSessionEntity | null> {
    return this.sessions.findOpen(sessionId, new Date(this.now()));
  }

  /**
   * Ends sessions of `userId`: the given ones, or every open one (but `except`). Returns the
   * ids it ended, after telling every replica.
   */
  async end(userId: string, sessionIds: readonly string[] | 'ALL', reason: SessionEndReason, except?: string): Promise<string[]> {
    const listed = sessionIds === 'ALL' ? null : sessionIds.filter((id) => id !== except);
    if (listed?.length === 0) {
      return [];
    }
    const ended = await this.sessions.revoke(userId, { ids: listed, except }, new Date(this.now()), reason);
    this.announceEnded(userId, listed || except ? ended : undefined);
    return ended;
  }

  /** Every session of a user ended without a row to mark (the user was deleted), or the user was disabled. */
  announceEnded(userId: string, sessionIds?: readonly string[]): void {
    if (sessionIds?.length === 0) {
      return;
    }
    this.forget(userId, sessionIds);
    this.events.publish(TOPICS.SESSIONS_ENDED, (sessionIds ? { userId, sessionIds } : { userId }) satisfies SessionsEndedPayload);
  }

  /** A user's role changed: every replica reads it again. */
  announceChanged(userId: string): void {
    this.forget(userId);
    this.events.publish(TOPICS.USER_CHANGED, { userId } satisfies UserChangedPayload);
  }

  private forget(userId: string, sessionIds?: readonly string[]): void {
    if (sessionIds) {
      sessionIds.forEach((id) => this.cache.delete(id));
      return;
    }
    for (const [id, entry] of this.cache) {
      if (entry.user.id === userId) {
        this.cache.delete(id);
      }
    }
  }

  private remember(sessionId: string, entry: CachedSession): void {
    this.cache.delete(sessionId);
    this.cache.set(sessionId, entry);
    while (this.cache.size > this.limits.cacheEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this.cache.delete(oldest);
    }
  }
}

/** Text Postgres can store (no control characters, no lone surrogates), cut to `max` characters; null when nothing is left. */
function storable(value: string | null, max: number): string | null {
  const cleaned = value
    ?.replace(/\p{Cc}/gu, '')
    .slice(0, max)
    // Also the half of a pair the cut may have left.
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
    .trim();
  return cleaned ? cleaned : null;
}
