import type { Logger } from 'pino';
import type { Role } from '@ccos/shared/domain';
import type { EventBus } from './pubsub';

export interface AuthenticatedUser {
  readonly id: string;
  readonly username: string;
  readonly role: Role;
  /** When the session token expires; a live connection ends then too. */
  readonly sessionExpiresAt?: Date;
  /** The session the bearer token names; revoking it ends this caller's access. */
  readonly sessionId?: string;
}

/** Where a request came from, as sign-in throttling and the session list record it. */
export interface RequestOrigin {
  /** The peer's address, or the client's from X-Forwarded-For when the peer is a trusted proxy. */
  readonly address: string;
  readonly userAgent: string | null;
}

/** Per-request GraphQL context, for HTTP and WebSocket operations alike. */
export interface RequestContext {
  readonly requestId: string;
  readonly logger: Logger;
  /** The signed-in user, or null for anonymous callers. */
  readonly user: AuthenticatedUser | null;
  /** A raw agent bearer token, when the caller presented one instead of a session token. */
  readonly agentToken: string | null;
  /** Subscription events, for resolvers that compose their own streams. */
  readonly events: EventBus;
  readonly origin: RequestOrigin;
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: unknown): string | null {
  return typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header.trim())?.[1] ?? null : null;
}

/** The actor name written to the audit log. */
export function actorOf(context: RequestContext): string {
  return context.user?.username ?? (context.agentToken ? 'agent' : 'anonymous');
}
