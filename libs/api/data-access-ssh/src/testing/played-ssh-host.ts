import type { AddressInfo } from 'node:net';
import { type Connection, Server as SshServer, type ServerChannel } from 'ssh2';
import { parseableEd25519KeyPair } from './ed25519-key-pair';

/** Plays the remote side of one exec: write to the channel, exit it, or end the client's connection. */
export type PlayedExec = (command: string, channel: ServerChannel, client: Connection) => void;

export interface PlayedSshHost {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * An in-process SSH server on loopback that accepts the given password and hands every exec to
 * `play`: for specs of what goes over the wire and how answers are read. (Real sshd in network
 * namespaces: the lab.)
 */
export async function startPlayedSshHost(play: PlayedExec, password?: string): Promise<PlayedSshHost> {
  const clients = new Set<Connection>();
  const server = new SshServer({ hostKeys: [parseableEd25519KeyPair().private] }, (client) => {
    clients.add(client);
    client.on('close', () => clients.delete(client));
    client.on('error', () => undefined);
    client.on('authentication', (context) =>
      context.method === 'password' && (password === undefined || context.password === password) ? context.accept() : context.reject(['password']),
    );
    client.on('session', (accept) => accept().on('exec', (acceptExec, _reject, info) => play(info.command, acceptExec(), client)));
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  return {
    port,
    stop: () => {
      clients.forEach((client) => client.end());
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
