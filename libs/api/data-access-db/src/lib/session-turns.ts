import type { Socket } from 'node:net';

/** Frontend messages after which the backend answers ReadyForQuery: Sync, Query, FunctionCall. */
const SYNC_POINTS = new Set(['S', 'Q', 'F']);
const READY_FOR_QUERY = 'Z';
const IDLE = 'I';

/** Splits a stream of typed protocol messages (type byte, int32 length) into whole messages. */
class MessageSplitter {
  private pending: Buffer = Buffer.alloc(0);

  get holdsPart(): boolean {
    return this.pending.length > 0;
  }

  /** Calls `onMessage` for each message the chunk completes, in order. */
  push(chunk: Buffer, onMessage: (type: string, firstBodyByte: number | undefined) => void): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (this.pending.length - offset >= 5) {
      const end = offset + 1 + this.pending.readInt32BE(offset + 1);
      if (this.pending.length < end) {
        break;
      }
      onMessage(String.fromCharCode(this.pending[offset] ?? 0), this.pending[offset + 5]);
      offset = end;
    }
    this.pending = this.pending.subarray(offset);
  }
}

/**
 * PGlite has one session for all its connections, and pglite-socket (0.2) hands it one message at a
 * time from whichever connection sent one, keeping a connection's turn only inside a transaction.
 * So one connection's Parse could be followed by another's, and the first one's Bind then ran the
 * other's statement with its own parameters (seen: a query answered with another connection's
 * row). Here connections take turns at the points where the session is theirs to give up: a
 * connection holds the session from the first message it sends until the backend has answered
 * every Sync and Query it sent with ReadyForQuery saying idle, so a statement's messages and a
 * transaction's statements are never split. Others' bytes wait, in order, until their turn.
 */
export class SessionTurns {
  private holder: SessionTurn | null = null;
  private readonly queue: SessionTurn[] = [];

  /**
   * Joins `client` to `backend` (connected) so that the client's startup message, then its
   * messages, reach the backend only in its turn; the backend's answers pass at once.
   */
  join(client: Socket, backend: Socket, startup: Buffer, rest: Buffer): void {
    this.request(new SessionTurn(this, client, backend, startup, rest));
  }

  request(turn: SessionTurn): void {
    if (this.holder === turn || this.queue.includes(turn)) {
      return;
    }
    if (this.holder === null) {
      this.holder = turn;
      turn.granted();
    } else {
      this.queue.push(turn);
    }
  }

  release(turn: SessionTurn): void {
    const waiting = this.queue.indexOf(turn);
    if (waiting >= 0) {
      this.queue.splice(waiting, 1);
    }
    if (this.holder !== turn) {
      return;
    }
    this.holder = null;
    const next = this.queue.shift();
    if (next) {
      this.holder = next;
      next.granted();
    }
  }

  holds(turn: SessionTurn): boolean {
    return this.holder === turn;
  }
}

class SessionTurn {
  private readonly fromClient = new MessageSplitter();
  private readonly fromBackend = new MessageSplitter();
  private startup: Buffer | null;
  private waiting: Buffer[] = [];
  /** Sync points sent to the backend (the startup message is one) not yet answered with ReadyForQuery. */
  private unanswered = 0;
  /** Whether messages were sent since the last sync point (a statement not yet closed by Sync). */
  private statementOpen = false;
  private idle = true;

  constructor(
    private readonly turns: SessionTurns,
    private readonly client: Socket,
    private readonly backend: Socket,
    startup: Buffer,
    rest: Buffer,
  ) {
    this.startup = startup;
    if (rest.length > 0) {
      this.waiting.push(rest);
    }
    client.on('data', (chunk: Buffer) => this.fromClientData(chunk));
    backend.on('data', (chunk: Buffer) => this.fromBackendData(chunk));
    // Backpressure both ways, as pipe() would.
    client.on('drain', () => backend.resume());
    backend.on('drain', () => client.resume());
    const close = () => this.turns.release(this);
    client.once('close', close);
    backend.once('close', close);
  }

  granted(): void {
    if (this.startup) {
      this.unanswered += 1;
      this.backend.write(this.startup);
      this.startup = null;
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const chunk of waiting) {
      this.forward(chunk);
    }
    this.releaseIfDone();
  }

  private fromClientData(chunk: Buffer): void {
    if (this.turns.holds(this)) {
      this.forward(chunk);
      return;
    }
    this.waiting.push(chunk);
    this.turns.request(this);
  }

  private forward(chunk: Buffer): void {
    this.fromClient.push(chunk, (type) => {
      if (SYNC_POINTS.has(type)) {
        this.unanswered += 1;
      }
      this.statementOpen = !SYNC_POINTS.has(type);
    });
    if (!this.backend.destroyed && !this.backend.write(chunk)) {
      this.client.pause();
    }
  }

  private fromBackendData(chunk: Buffer): void {
    this.fromBackend.push(chunk, (type, status) => {
      if (type === READY_FOR_QUERY) {
        this.unanswered = Math.max(0, this.unanswered - 1);
        this.idle = status === IDLE.charCodeAt(0);
      }
    });
    if (!this.client.destroyed && !this.client.write(chunk)) {
      this.backend.pause();
    }
    this.releaseIfDone();
  }

  private releaseIfDone(): void {
    if (this.turns.holds(this) && this.unanswered === 0 && !this.statementOpen && !this.fromClient.holdsPart && this.idle && this.waiting.length === 0) {
      this.turns.release(this);
    }
  }
}
