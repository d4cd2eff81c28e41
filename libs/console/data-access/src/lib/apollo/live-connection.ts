import { DOCUMENT } from '@angular/common';
import { Injectable, effect, inject, signal } from '@angular/core';
import { type Client, createClient } from 'graphql-ws';
import { backoffDelayMs, type BackoffPolicy } from '@ccos/shared/util-timing';
import { Session } from '../session/session';
import { GRAPHQL_PATH } from './graphql-path';

/** The server refuses a connection_init without a valid token with this close code. */
const CLOSE_FORBIDDEN = 4403;
const CLOSE_PONG_TIMEOUT = 4408;
const KEEP_ALIVE_MS = 15_000;
const PONG_TIMEOUT_MS = 5_000;
/** 1 s, 2 s, 4 s … capped at 30 s, each between half and all of that (jitter spreads reconnecting consoles). */
const RECONNECT_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000, jitter: 0.5 };

/**
 * The graphql-ws client for subscriptions (live install progress, node and CSR changes).
 * It connects only while a subscription is active, reconnects with capped, jittered
 * backoff, and sends the current token in `connection_init`; when the token changes
 * (sign-in as someone else, sign-out) the socket is dropped so the next connection
 * authenticates afresh.
 */
@Injectable({ providedIn: 'root' })
export class LiveConnection {
  private readonly session = inject(Session);
  private readonly open = signal(false);
  private readonly reconnectListeners = new Set<() => void>();
  readonly client: Client;
  /** Whether the socket is up (false while idle or reconnecting). */
  readonly connected = this.open.asReadonly();

  constructor() {
    const location = inject(DOCUMENT).location;
    let socket: WebSocket | null = null;
    let pongTimer: ReturnType<typeof setTimeout> | undefined;
    this.client = createClient({
      url: webSocketUrl(location, GRAPHQL_PATH),
      lazy: true,
      lazyCloseTimeout: 3_000,
      keepAlive: KEEP_ALIVE_MS,
      retryAttempts: Number.POSITIVE_INFINITY,
      retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, retryDelayMs(retries))),
      // A refused token will not get better by retrying; the error link then ends the session.
      shouldRetry: (event) => !isCloseEvent(event) || event.code !== CLOSE_FORBIDDEN,
      connectionParams: () => {
        const token = this.session.token();
        return token ? { authorization: `Bearer ${token}` } : {};
      },
      on: {
        connected: (connected) => {
          socket = connected as WebSocket;
          this.open.set(true);
          for (const listener of [...this.reconnectListeners]) {
            listener();
          }
        },
        closed: () => {
          socket = null;
          this.open.set(false);
          clearTimeout(pongTimer);
        },
        // A half-open connection (laptop lid, proxy) answers no ping: close it so graphql-ws reconnects.
        ping: (received) => {
          if (!received) {
            pongTimer = setTimeout(() => socket?.readyState === WebSocket.OPEN && socket.close(CLOSE_PONG_TIMEOUT, 'Request Timeout'), PONG_TIMEOUT_MS);
          }
        },
        pong: (received) => {
          if (received) {
            clearTimeout(pongTimer);
          }
        },
      },
    });

    let previousToken = this.session.token();
    effect(() => {
      const token = this.session.token();
      if (token !== previousToken) {
        previousToken = token;
        // Not fatal: active subscriptions reconnect at once with the new connectionParams.
        this.client.terminate();
      }
    });
  }

  /** See {@link onReconnect}. */
  addReconnectListener(listener: () => void): void {
    this.reconnectListeners.add(listener);
  }

  removeReconnectListener(listener: () => void): void {
    this.reconnectListeners.delete(listener);
  }
}

/**
 * Calls `listener` whenever the socket comes up again after it was up while the listener
 * was registered: events published meanwhile were missed, so the caller reloads what it
 * shows. (The first connection of a new subscription is not a reconnect.) Returns the
 * function that unregisters it.
 */
export function onReconnect(connection: LiveConnection, listener: () => void): () => void {
  let seenUp = connection.connected();
  const wrapped = () => {
    if (seenUp) {
      listener();
    }
    seenUp = true;
  };
  connection.addReconnectListener(wrapped);
  return () => connection.removeReconnectListener(wrapped);
}

/** ws:// or wss:// to the same host as the page. */
export function webSocketUrl(location: Pick<Location, 'protocol' | 'host'>, path: string): string {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${path}`;
}

/** The wait before reconnect number `retries` (from 0). */
export function retryDelayMs(retries: number, random: () => number = Math.random): number {
  return backoffDelayMs(RECONNECT_BACKOFF, retries, random);
}

function isCloseEvent(value: unknown): value is { code: number; reason: string } {
  return typeof value === 'object' && value !== null && 'code' in value && 'reason' in value;
}
