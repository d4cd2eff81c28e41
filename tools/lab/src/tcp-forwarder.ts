import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A plain TCP forward (TLS passes through untouched, so client certificates reach the target):
 * the VIP's 6443 to kube-sim, or, with several targets, what a Kubernetes Service does for the
 * replicas of the API: connections spread round-robin, a target that refuses (killed,
 * restarting) skipped for the next one.
 */
export interface TcpForwarder {
  /** Connections each target port took. */
  readonly connections: ReadonlyMap<number, number>;
  /** Another target (a replica started later) in the rotation. */
  addTarget(target: ForwardTarget): void;
  readonly close: () => Promise<void>;
}

export interface ForwardTarget {
  readonly host: string;
  readonly port: number;
}

/** Listens on `listen` and forwards every connection to `target` (one of `targets`, in turn). */
export async function startTcpForwarder(listen: ForwardTarget, target: ForwardTarget | readonly ForwardTarget[]): Promise<TcpForwarder> {
  const targets: ForwardTarget[] = Array.isArray(target) ? [...target] : [target as ForwardTarget];
  const connections = new Map<number, number>();
  const sockets = new Set<Socket>();
  let next = 0;

  const forward = (client: Socket, attempt: number) => {
    if (attempt >= targets.length) {
      client.destroy();
      return;
    }
    const chosen = targets[next++ % targets.length];
    const upstream = connect(chosen.port, chosen.host);
    const refused = () => {
      upstream.destroy();
      forward(client, attempt + 1);
    };
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      connections.set(chosen.port, (connections.get(chosen.port) ?? 0) + 1);
      sockets.add(upstream);
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('close', closeBoth);
      upstream.on('error', closeBoth).on('close', closeBoth);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };

  // Paused until a target accepted, so nothing the client sends first is lost.
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('error', () => client.destroy());
    forward(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    connections,
    addTarget: (added) => void targets.push(added),
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close(() => resolve());
    }),
  };
}
