import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';

/** The first byte of every TLS connection: a handshake record (ClientHello). */
const TLS_HANDSHAKE = 0x16;

export interface OnePortListener {
  readonly port: number;
  /** Connections handed to each protocol so far. */
  readonly accepted: { readonly tls: number; readonly plain: number };
  /**
   * Stops accepting, waits for the connections it handed out to close (their servers
   * end them once idle), and destroys what is left after `graceMs`.
   */
  close(graceMs: number): Promise<void>;
}

/**
 * HTTPS and plain HTTP on one port, told apart by the first byte each client sends, as
 * Argo CD's cmux does: 0x16 starts a TLS handshake, anything else is HTTP. So the
 * console and every existing `http://localhost:PORT` client keep working while agents
 * speak TLS to the very same address. Each connection goes to its server whole (the
 * sniffed byte is put back), and the servers never listen themselves.
 *
 * A client that connects and says nothing is dropped after `firstByteTimeoutMs`;
 * after that the servers' own header and handshake timeouts apply.
 */
export async function listenOnOnePort(options: {
  readonly port: number;
  readonly host: string;
  readonly tls: HttpsServer;
  readonly plain: HttpServer;
  readonly firstByteTimeoutMs?: number;
}): Promise<OnePortListener> {
  const sockets = new Set<Socket>();
  const accepted = { tls: 0, plain: 0 };
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? 10_000;
  let onEmpty: (() => void) | null = null;
  const listener: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) {
        onEmpty?.();
      }
    });
    const silent = () => socket.destroy();
    socket.setTimeout(firstByteTimeoutMs, silent);
    socket.once('error', () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      // From here on the servers' own timeouts apply (keep-alive, headers, handshake).
      socket.setTimeout(0);
      socket.off('timeout', silent);
      socket.unshift(chunk);
      const secure = chunk[0] === TLS_HANDSHAKE;
      if (secure) {
        accepted.tls += 1;
      } else {
        accepted.plain += 1;
      }
      (secure ? options.tls : options.plain).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, options.host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  return {
    port: (listener.address() as AddressInfo).port,
    accepted,
    async close(graceMs) {
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      if (sockets.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (onEmpty = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(timer);
      }
      for (const socket of sockets) {
        socket.destroy();
      }
      await stopped;
    },
  };
}
