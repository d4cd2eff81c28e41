import { lookup } from 'node:dns/promises';
import { Socket } from 'node:net';

/** How a TCP connect went. */
export type TcpProbe =
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly ms: number; readonly code: string; readonly message: string };

/** Name resolution and TCP reachability, as `getaddrinfo` and `nc -zv` see them. */
export interface Network {
  /** Opens and closes a TCP connection. */
  tcpConnect(host: string, port: number, timeoutMs: number): Promise<TcpProbe>;
  /** Every address `getaddrinfo` gives for a name (empty when it does not resolve). */
  resolve(name: string): Promise<{ readonly addresses: readonly string[]; readonly code?: string }>;
}

/** The host's network stack. */
export class NodeNetwork implements Network {
  tcpConnect(host: string, port: number, timeoutMs: number): Promise<TcpProbe> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise((resolve) => {
      const socket = new Socket();
      const done = (probe: TcpProbe) => {
        socket.destroy();
        resolve(probe);
      };
      socket.setTimeout(timeoutMs, () => done({ ok: false, ms: elapsed(), code: 'ETIMEDOUT', message: `no answer within ${Math.round(timeoutMs / 1000)} s` }));
      socket.once('connect', () => done({ ok: true, ms: elapsed() }));
      socket.once('error', (error: NodeJS.ErrnoException) => done({ ok: false, ms: elapsed(), code: error.code ?? 'ECONNECT', message: error.message }));
      socket.connect({ host, port });
    });
  }

  async resolve(name: string): Promise<{ readonly addresses: readonly string[]; readonly code?: string }> {
    try {
      const found = await lookup(name, { all: true });
      return { addresses: found.map((entry) => entry.address) };
    } catch (error) {
      return { addresses: [], code: (error as NodeJS.ErrnoException).code ?? 'ENOTFOUND' };
    }
  }
}
