import type { AuthenticatedUser } from '@ccos/api/util-graphql';
import { message } from '@ccos/shared/messages';

/** How many graphql-ws connections and subscriptions the service admits (README: WS_* variables). */
export interface WebSocketLimits {
  /** Open connections of one session (one sign-in: a browser, the CLI). */
  readonly connectionsPerSession: number;
  /** Open connections of one user, all sessions together. */
  readonly connectionsPerUser: number;
  /** Open connections of this process, signed in or not yet. */
  readonly connectionsPerProcess: number;
  /** Subscriptions (and queries) running at once on one connection. */
  readonly subscriptionsPerConnection: number;
}

/**
 * A console tab keeps one connection; a few tabs and the CLI stay well inside these. Each
 * subscription holds an event listener and its resolver's state, so the process limit bounds
 * memory at about connectionsPerProcess × subscriptionsPerConnection subscriptions.
 */
export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = {
  connectionsPerSession: 8,
  connectionsPerUser: 32,
  connectionsPerProcess: 500,
  subscriptionsPerConnection: 32,
};

/**
 * Close codes of a refused connection (4000–4999 are the application's; graphql-ws uses 44xx/45xx
 * of its own, and this service 4403 and 4429). graphql-ws clients see them in their `closed` event.
 */
export const WEBSOCKET_CLOSE_CODES = {
  /** The session already has connectionsPerSession open. */
  sessionConnections: 4431,
  /** The user already has connectionsPerUser open. */
  userConnections: 4432,
  /** The process already has connectionsPerProcess open; another replica (or later) may take it. */
  processConnections: 4433,
} as const;

/** What a refusal is counted as (`ccos_websocket_refusals_total{limit}`). */
export type WebSocketLimitName = 'session' | 'user' | 'process' | 'subscriptions' | 'rate';

export interface WebSocketRefusal {
  readonly code: number;
  /** The close frame's reason (English: a close frame has no room for more, at most 123 bytes). */
  readonly reason: string;
}

/** What of a socket the admission needs: when it closes. */
interface ClosingSocket {
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Counts open graphql-ws connections per process, user and session, and refuses one past a limit.
 * A count is taken back when its socket closes, and a user or session with none left is forgotten,
 * so nothing of a closed connection stays here.
 */
export class WebSocketAdmission {
  private open = 0;
  private readonly byUser = new Map<string, number>();
  private readonly bySession = new Map<string, number>();

  constructor(
    readonly limits: WebSocketLimits,
    private readonly refused: (limit: WebSocketLimitName) => void,
  ) {}

  /** Open connections now. */
  get connections(): number {
    return this.open;
  }

  /** A new socket, before anything is read from it: refused when the process is full. */
  admitSocket(socket: ClosingSocket): WebSocketRefusal | null {
    if (this.open >= this.limits.connectionsPerProcess) {
      this.refused('process');
      return { code: WEBSOCKET_CLOSE_CODES.processConnections, reason: message('websocket.tooManyForProcess', { max: this.limits.connectionsPerProcess }).message };
    }
    this.open += 1;
    socket.once('close', () => {
      this.open -= 1;
    });
    return null;
  }

  /** A connection that signed in as `user` (connection_init): refused past the user's or the session's limit. */
  admitUser(user: AuthenticatedUser, socket: ClosingSocket): WebSocketRefusal | null {
    const session = user.sessionId ?? null;
    if (session !== null && (this.bySession.get(session) ?? 0) >= this.limits.connectionsPerSession) {
      this.refused('session');
      return { code: WEBSOCKET_CLOSE_CODES.sessionConnections, reason: message('websocket.tooManyForSession', { max: this.limits.connectionsPerSession }).message };
    }
    if ((this.byUser.get(user.id) ?? 0) >= this.limits.connectionsPerUser) {
      this.refused('user');
      return { code: WEBSOCKET_CLOSE_CODES.userConnections, reason: message('websocket.tooManyForUser', { max: this.limits.connectionsPerUser }).message };
    }
    add(this.byUser, user.id, 1);
    if (session !== null) {
      add(this.bySession, session, 1);
    }
    socket.once('close', () => {
      add(this.byUser, user.id, -1);
      if (session !== null) {
        add(this.bySession, session, -1);
      }
    });
    return null;
  }
}

function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next > 0) {
    counts.set(key, next);
  } else {
    counts.delete(key);
  }
}
