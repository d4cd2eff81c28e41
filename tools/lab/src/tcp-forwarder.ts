import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A plain TCP forward (TLS passes through untouched, so client certificates
 * reach the target): the VIP's 6443 to kube-sim.
 */
export interface TcpForwarder {
  readonly close: () => Promise<void>;
}

/** Listens on `listen` and forwards every connection to `target`. */
export async function startTcpForwarder(
  listen: { readonly host: string; readonly port: number },
  target: { readonly host: string; readonly port: number },
): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close(() => resolve());
    }),
  };
}
