import type { Logger } from 'pino';
import { type AuthenticatedUser, type EventBus, type SessionsEndedPayload, TOPICS } from '@ccos/api/util-graphql';

/** What of a WebSocket (ws) this needs. */
export interface LiveSocket {
  readonly readyState: number;
  readonly OPEN: number;
  close(code: number, reason: string): void;
  once(event: 'close', listener: () => void): unknown;
}

export interface LiveSessions {
  /** Follows a connection that authenticated as `user`. */
  add(user: AuthenticatedUser, socket: LiveSocket): void;
  stop(): void;
}

/** graphql-ws's close code for a connection whose token is refused; the console then ends its session. */
const CLOSE_FORBIDDEN = 4403;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The users behind open WebSocket connections. A connection authenticates once, in
 * connection_init, so without this it would outlive its session: it is closed when the
 * session token expires and when the user's sessions end (sign-out, password change) on
 * any replica.
 */
export function trackLiveSessions(events: EventBus, logger: Logger): LiveSessions {
  const socketsByUser = new Map<string, Set<LiveSocket>>();
  const end = (socket: LiveSocket, why: string): void => {
    if (socket.readyState === socket.OPEN) {
      socket.close(CLOSE_FORBIDDEN, `Forbidden: ${why}`);
    }
  };
  const ended = events.subscribe(TOPICS.SESSIONS_ENDED)[Symbol.asyncIterator]();
  void (async () => {
    for (let next = await ended.next(); !next.done; next = await ended.next()) {
      const { userId } = next.value as SessionsEndedPayload;
      const sockets = socketsByUser.get(userId);
      logger.debug({ userId, connections: sockets?.size ?? 0 }, 'sessions ended; closing live connections');
      sockets?.forEach((socket) => end(socket, 'the session has ended'));
    }
  })().catch((error: unknown) => logger.error({ err: error }, 'stopped following ended sessions'));
  return {
    add(user, socket) {
      const sockets = socketsByUser.get(user.id) ?? new Set<LiveSocket>();
      socketsByUser.set(user.id, sockets.add(socket));
      const expiry = user.sessionExpiresAt
        ? setTimeout(() => end(socket, 'the session has expired'), Math.min(Math.max(0, user.sessionExpiresAt.getTime() - Date.now()), MAX_TIMER_MS))
        : undefined;
      socket.once('close', () => {
        clearTimeout(expiry);
        sockets.delete(socket);
        if (sockets.size === 0 && socketsByUser.get(user.id) === sockets) {
          socketsByUser.delete(user.id);
        }
      });
    },
    stop() {
      void ended.return?.();
    },
  };
}
