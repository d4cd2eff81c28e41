import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { SessionTurns } from './session-turns';

const PROTOCOL_3 = 196_608;
const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const CANCEL_REQUEST = 80_877_102;
const SCRAM_ITERATIONS = 4096;
/** Nothing a client sends before it is authenticated needs more. */
const MAX_AUTH_MESSAGE = 16 * 1024;
const AUTH_TIMEOUT_MS = 10_000;

/** SCRAM-SHA-256 keys derived once from the password (RFC 5802 / RFC 7677), as Postgres stores them. */
interface ScramKeys {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

function scramKeys(password: string): ScramKeys {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, SCRAM_ITERATIONS, 32, 'sha256');
  return { salt, storedKey: createHash('sha256').update(hmac(salted, 'Client Key')).digest(), serverKey: hmac(salted, 'Server Key') };
}

function authentication(code: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const message = Buffer.alloc(9 + data.length);
  message.write('R', 0, 'latin1');
  message.writeInt32BE(8 + data.length, 1);
  message.writeInt32BE(code, 5);
  data.copy(message, 9);
  return message;
}

/** A FATAL ErrorResponse, as Postgres sends it before closing the connection. */
function fatal(code: string, text: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${text}\0\0`, 'utf8');
  const message = Buffer.alloc(5 + fields.length);
  message.write('E', 0, 'latin1');
  message.writeInt32BE(4 + fields.length, 1);
  fields.copy(message, 5);
  return message;
}

/** `key=value` attributes of a SCRAM message. */
function attributes(text: string): Map<string, string> {
  return new Map(text.split(',').map((part) => [part.slice(0, 1), part.slice(2)] as [string, string]));
}

export interface ScramFront {
  /** `127.0.0.1:<port>`. */
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A Postgres wire-protocol front on 127.0.0.1 that lets a connection through to `backendPath`
 * (a Unix socket) only after SCRAM-SHA-256 authentication with `password`. pglite-socket
 * (0.2) authenticates nobody and PGlite answers a startup message with AuthenticationOk, so
 * this front does the exchange a Postgres server would do up to AuthenticationSASLFinal, then
 * hands the startup message to PGlite, whose AuthenticationOk completes it. Its connections take
 * turns at PGlite's one session ({@link SessionTurns}).
 * @see https://www.postgresql.org/docs/current/sasl-authentication.html
 */
export async function startScramFront(password: string, backendPath: string): Promise<ScramFront> {
  const keys = scramKeys(password);
  const sockets = new Set<Socket>();
  const turns = new SessionTurns();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    handle(client, keys, backendPath, sockets, turns);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) {
          socket.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

type Phase = 'startup' | 'initial-response' | 'final-response' | 'done';

function handle(client: Socket, keys: ScramKeys, backendPath: string, sockets: Set<Socket>, turns: SessionTurns): void {
  let buffer = Buffer.alloc(0);
  let phase: Phase = 'startup';
  let startup: Buffer | null = null;
  let clientFirstBare = '';
  let gs2Header = '';
  let serverFirst = '';
  let nonce = '';
  const timer = setTimeout(() => refuse('08006', 'authentication timed out'), AUTH_TIMEOUT_MS);

  function refuse(code: string, text: string): void {
    clearTimeout(timer);
    phase = 'done';
    client.end(fatal(code, text), () => client.destroy());
  }

  function open(rest: Buffer): void {
    clearTimeout(timer);
    phase = 'done';
    client.off('data', onData);
    client.pause();
    const backend = connect(backendPath);
    sockets.add(backend);
    backend.once('close', () => {
      sockets.delete(backend);
      client.destroy();
    });
    client.once('close', () => backend.destroy());
    backend.once('error', () => client.destroy());
    client.once('error', () => backend.destroy());
    backend.once('connect', () => {
      turns.join(client, backend, startup ?? Buffer.alloc(0), Buffer.from(rest));
      client.resume();
    });
  }

  /** Takes one whole message off the buffer: `typed` messages start with a type byte. */
  function take(typed: boolean): { type: string; body: Buffer } | null {
    const offset = typed ? 1 : 0;
    if (buffer.length < offset + 4) {
      return null;
    }
    const length = buffer.readInt32BE(offset);
    if (length < 4 || length > MAX_AUTH_MESSAGE) {
      refuse('08P01', 'invalid message length before authentication');
      return null;
    }
    if (buffer.length < offset + length) {
      return null;
    }
    const message = { type: typed ? buffer.toString('latin1', 0, 1) : '', body: buffer.subarray(offset + 4, offset + length), whole: buffer.subarray(0, offset + length) };
    if (!typed) {
      startup = Buffer.from(message.whole);
    }
    buffer = buffer.subarray(offset + length);
    return message;
  }

  function onStartup(body: Buffer): void {
    const code = body.readInt32BE(0);
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      // Loopback only: no TLS, as a Postgres server without ssl says.
      startup = null;
      client.write('N');
      return;
    }
    if (code === CANCEL_REQUEST) {
      startup = null;
      clearTimeout(timer);
      phase = 'done';
      client.destroy();
      return;
    }
    if (code !== PROTOCOL_3) {
      refuse('0A000', 'unsupported frontend protocol');
      return;
    }
    phase = 'initial-response';
    client.write(authentication(10, Buffer.from('SCRAM-SHA-256\0\0', 'latin1')));
  }

  function onInitialResponse(type: string, body: Buffer): void {
    const end = body.indexOf(0);
    if (type !== 'p' || end < 0 || body.toString('latin1', 0, end) !== 'SCRAM-SHA-256' || body.length < end + 5) {
      refuse('28000', 'SCRAM-SHA-256 authentication is required');
      return;
    }
    const first = body.subarray(end + 5).toString('utf8');
    const match = /^([ny]),(a=[^,]*)?,(.*)$/.exec(first);
    if (!match) {
      refuse('08P01', 'malformed SCRAM client-first-message (channel binding is not offered)');
      return;
    }
    gs2Header = `${match[1]},${match[2] ?? ''},`;
    clientFirstBare = match[3] ?? '';
    const clientNonce = attributes(clientFirstBare).get('r');
    if (!clientNonce) {
      refuse('08P01', 'malformed SCRAM client-first-message');
      return;
    }
    nonce = clientNonce + randomBytes(18).toString('base64');
    serverFirst = `r=${nonce},s=${keys.salt.toString('base64')},i=${SCRAM_ITERATIONS}`;
    phase = 'final-response';
    client.write(authentication(11, Buffer.from(serverFirst, 'utf8')));
  }

  function onFinalResponse(type: string, body: Buffer): void {
    const final = body.toString('utf8');
    const proofAt = final.lastIndexOf(',p=');
    const values = attributes(final);
    const proof = Buffer.from(values.get('p') ?? '', 'base64');
    if (type !== 'p' || proofAt < 0 || values.get('r') !== nonce || values.get('c') !== Buffer.from(gs2Header, 'utf8').toString('base64') || proof.length !== 32) {
      refuse('28P01', 'password authentication failed');
      return;
    }
    const authMessage = `${clientFirstBare},${serverFirst},${final.slice(0, proofAt)}`;
    const signature = hmac(keys.storedKey, authMessage);
    const clientKey = Buffer.from(proof.map((byte, index) => byte ^ (signature[index] ?? 0)));
    if (!timingSafeEqual(createHash('sha256').update(clientKey).digest(), keys.storedKey)) {
      refuse('28P01', 'password authentication failed');
      return;
    }
    client.write(authentication(12, Buffer.from(`v=${hmac(keys.serverKey, authMessage).toString('base64')}`, 'utf8')));
    open(buffer);
  }

  function onData(chunk: Buffer): void {
    buffer = Buffer.concat([buffer, chunk]);
    if (buffer.length > MAX_AUTH_MESSAGE * 2) {
      refuse('08P01', 'too much data before authentication');
      return;
    }
    for (;;) {
      if (phase === 'done') {
        return;
      }
      const message = take(phase !== 'startup');
      if (!message) {
        return;
      }
      if (phase === 'startup') {
        onStartup(message.body);
      } else if (phase === 'initial-response') {
        onInitialResponse(message.type, message.body);
      } else {
        onFinalResponse(message.type, message.body);
      }
    }
  }

  client.on('data', onData);
  client.on('error', () => client.destroy());
}
