import { connect, createServer, type Socket } from 'node:net';

/**
 * What a Kubernetes Service does for the replicas of the API, as far as agents can tell: one
 * address, connections spread round-robin over the backends, and a backend that refuses a
 * connection (killed, restarting) skipped for the next one. TLS passes through untouched, so the
 * agent's pin is checked against whichever replica answers.
 */
export interface ServiceBalancer {
  readonly port: number;
  /** Connections each backend port took. */
  readonly connections: ReadonlyMap<number, number>;
  addBackend(port: number): void;
  close(): Promise<void>;
}

export async function startServiceBalancer(listen: { readonly host: string; readonly port: number }, backendPorts: readonly number[], backendHost = '127.0.0.1'): Promise<ServiceBalancer> {
  const backends = [...backendPorts];
  const connections = new Map<number, number>();
  const sockets = new Set<Socket>();
  let next = 0;

  const connectAny = (client: Socket, attempt: number) => {
    if (attempt >= backends.length) {
      client.destroy();
      return;
    }
    const port = backends[(next++) % backends.length];
    const upstream = connect(port, backendHost);
    const refused = () => {
      upstream.destroy();
      connectAny(client, attempt + 1);
    };
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      connections.set(port, (connections.get(port) ?? 0) + 1);
      sockets.add(upstream);
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      upstream.on('error', closeBoth).on('close', closeBoth);
      client.on('error', closeBoth).on('close', closeBoth);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };

  const server = createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('error', () => client.destroy());
    connectAny(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  return {
    port: listen.port,
    connections,
    addBackend: (port) => void backends.push(port),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) {
          socket.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
