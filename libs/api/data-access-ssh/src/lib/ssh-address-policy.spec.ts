import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
// The service's one address policy (ALLOW_CLUSTER_ADDRESSES); the pool is handed the same guard in start-api.ts.
import { ClusterAddressGuard, parseAddressPolicy } from '@ccos/api/data-access-kube';
import { SSH_ADDRESS_REFUSED, type SshConnectEvent, openSshSession } from './ssh-connect';
import { SshError } from './ssh-errors';

/**
 * Issue 25: the address policy is checked before every connection, not only when a host is
 * entered: a stored host (or a name that now resolves elsewhere) on a loopback address gets no
 * TCP connection, so no password or key reaches whatever listens on the service's own host.
 */
describe('SSH connections under the address policy', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) {
      await close();
    }
  });

  /** A TCP listener on 127.0.0.1 that counts connections and says nothing: the service's own host. */
  async function localListener(): Promise<{ port: number; connections: () => number }> {
    let count = 0;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      count += 1;
      sockets.add(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { port: (server.address() as AddressInfo).port, connections: () => count };
  }

  const target = (host: string, port: number) => ({ host, port, username: 'root', auth: { kind: 'password' as const, password: 'never-sent-pw-1' } });

  it.each(['127.0.0.1', 'localhost', '::ffff:127.0.0.1'])('refuses %s before any TCP connection when loopback is not allowed', async (host) => {
    const listener = await localListener();
    const events: SshConnectEvent[] = [];
    const error = await openSshSession(target(host, listener.port), { addresses: new ClusterAddressGuard(), onEvent: (event) => events.push(event) }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SshError);
    expect((error as SshError).kind).toBe('UNREACHABLE');
    expect((error as SshError).code).toBe(SSH_ADDRESS_REFUSED);
    expect((error as SshError).message).toMatch(/is a loopback address \(the service's own host\), which the service opens no SSH connection to; .*ALLOW_CLUSTER_ADDRESSES=loopback/);
    expect(events.map((event) => event.type)).toEqual(['failed']);
    expect(listener.connections()).toBe(0);
  });

  it.each([['loopback'], ['127.0.0.1/32']])('connects when ALLOW_CLUSTER_ADDRESSES=%s lists it', async (allow) => {
    const listener = await localListener();
    const error = await openSshSession(target('127.0.0.1', listener.port), { addresses: new ClusterAddressGuard(parseAddressPolicy(allow)), connectTimeoutMs: 2_000 }).then(
      () => null,
      (caught: unknown) => caught as SshError,
    );
    // The listener closes at once: the attempt got as far as TCP, which is all this shows.
    expect(error?.code).not.toBe(SSH_ADDRESS_REFUSED);
    expect(listener.connections()).toBe(1);
  });
});
