import { spawn } from 'node:child_process';
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

/**
 * An in-process SSH server whose execs run in this machine's own `sh`, as the SSH user's shell on
 * a host would run them: for specs of remote scripts against real files in a temporary folder.
 */
export function startLocalShellHost(password?: string): Promise<PlayedSshHost> {
  return startPlayedSshHost((command, channel) => {
    const shell = spawn('sh', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'] });
    shell.stdout.pipe(channel, { end: false });
    shell.stderr.pipe(channel.stderr, { end: false });
    channel.pipe(shell.stdin);
    shell.on('close', (code, signal) => {
      if (code !== null) {
        channel.exit(code);
      } else {
        channel.exit((signal ?? 'SIGKILL').replace(/^SIG/, ''));
      }
      channel.end();
    });
  }, password);
}
