import type { Logger } from 'pino';
import { type AuthenticatedUser, type EventBus, type SessionsEndedPayload, TOPICS, type UserChangedPayload } from '@ccos/api/util-graphql';

/** What of a WebSocket (ws) this needs. */
export interface LiveSocket {
  readonly readyState: number;
  readonly OPEN: number;
  close(code: number, reason: string): void;
  once(event: 'close', listener: () => void): unknown;
}

/** The connection's user as the database says now (no cache), or null when its session is over. */
export type SessionRecheck = () => Promise<AuthenticatedUser | null>;

export interface LiveSessions {
  /** Follows a connection that authenticated as `user`; `recheck` reads its session again. */
  add(user: AuthenticatedUser, socket: LiveSocket, recheck: SessionRecheck): void;
  stop(): void;
}

/** graphql-ws's close code for a connection whose token is refused; the console then ends its session. */
const CLOSE_FORBIDDEN = 4403;
/** "Service Restart": graphql-ws clients reconnect, and connection_init reads the user afresh. */
const CLOSE_RECONNECT = 1012;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Connection {
  readonly socket: LiveSocket;
  readonly sessionId: string | undefined;
  readonly role: AuthenticatedUser['role'];
  readonly recheck: SessionRecheck;
}

/**
 * The users behind open WebSocket connections. A connection authenticates once, in
 * connection_init, so without this it would outlive its session: it is closed when the
 * session token expires and when its session ends (sign-out of that device, of all devices,
 * a password change, the user disabled or deleted) on any replica. A changed role closes the
 * user's connections with "reconnect", so the next connection_init runs with the new role. When
 * this replica's event listener is back after a gap (announcements of other replicas may have
 * passed it by), every connection's session is read again and closed as those would have.
 */
export function trackLiveSessions(events: EventBus, logger: Logger): LiveSessions {
  const byUser = new Map<string, Set<Connection>>();
  const end = (socket: LiveSocket, code: number, why: string): void => {
    if (socket.readyState === socket.OPEN) {
      socket.close(code, why);
    }
  };
  const follow = <T>(topic: string, handle: (payload: T) => void): AsyncIterator<unknown> => {
    const iterator = events.subscribe(topic)[Symbol.asyncIterator]();
    void (async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        handle(next.value as T);
      }
    })().catch((error: unknown) => logger.error({ err: error, topic }, 'stopped following session changes'));
    return iterator;
  };
  const ended = follow<SessionsEndedPayload>(TOPICS.SESSIONS_ENDED, ({ userId, sessionIds }) => {
    const closing = [...(byUser.get(userId) ?? [])].filter((connection) => !sessionIds || (connection.sessionId !== undefined && sessionIds.includes(connection.sessionId)));
    logger.debug({ userId, sessions: sessionIds?.length ?? 'all', connections: closing.length }, 'sessions ended; closing their live connections');
    closing.forEach((connection) => end(connection.socket, CLOSE_FORBIDDEN, 'Forbidden: the session has ended'));
  });
  const changed = follow<UserChangedPayload>(TOPICS.USER_CHANGED, ({ userId }) => {
    byUser.get(userId)?.forEach((connection) => end(connection.socket, CLOSE_RECONNECT, "the user's role changed; reconnect"));
  });
  const resumed = follow<unknown>(TOPICS.EVENTS_RESUMED, () => {
    const connections = [...byUser.values()].flatMap((set) => [...set]);
    logger.info({ connections: connections.length }, 'reading the sessions of live connections again after a gap in announcements');
    for (const connection of connections) {
      connection.recheck().then(
        (now) => {
          if (!now) {
            end(connection.socket, CLOSE_FORBIDDEN, 'Forbidden: the session has ended');
          } else if (now.role !== connection.role) {
            end(connection.socket, CLOSE_RECONNECT, "the user's role changed; reconnect");
          }
        },
        (error: unknown) => logger.warn({ err: error }, 'could not read a live connection\'s session again; it stays open until its next announcement or expiry'),
      );
    }
  });
  return {
    add(user, socket, recheck) {
      const connections = byUser.get(user.id) ?? new Set<Connection>();
      const connection: Connection = { socket, sessionId: user.sessionId, role: user.role, recheck };
      byUser.set(user.id, connections.add(connection));
      const expiry = user.sessionExpiresAt
        ? setTimeout(() => end(socket, CLOSE_FORBIDDEN, 'Forbidden: the session has expired'), Math.min(Math.max(0, user.sessionExpiresAt.getTime() - Date.now()), MAX_TIMER_MS))
        : undefined;
      socket.once('close', () => {
        clearTimeout(expiry);
        connections.delete(connection);
        if (connections.size === 0 && byUser.get(user.id) === connections) {
          byUser.delete(user.id);
        }
      });
    },
    stop() {
      void ended.return?.();
      void changed.return?.();
      void resumed.return?.();
    },
  };
}
