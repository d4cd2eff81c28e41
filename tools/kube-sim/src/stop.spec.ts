import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { startKubeSim } from './kube-sim';

/** How a TCP connection to the port ends: refused, reset, or the server sends bytes. */
function connectionOutcome(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.once('close', () => resolve('closed'));
  });
}

describe('kube-sim stop', () => {
  it('ends a connection whose TLS handshake has not finished, so no request reaches the stopped server later', async () => {
    const sim = await startKubeSim();
    const socket = connect(sim.port, sim.host);
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await sim.stop();
    await closed;
    expect(socket.destroyed).toBe(true);
  });

  it('with holdPort resets every connection on its port until the second stop frees it', async () => {
    const sim = await startKubeSim();
    await sim.stop({ holdPort: true });
    expect(await connectionOutcome(sim.host, sim.port)).toBe('ECONNRESET');
    expect(await connectionOutcome(sim.host, sim.port)).toBe('ECONNRESET');
    await sim.stop();
    expect(await connectionOutcome(sim.host, sim.port)).toBe('ECONNREFUSED');
  });

  it('a kube-sim replacing a held one serves on its port', async () => {
    const first = await startKubeSim();
    await first.stop({ holdPort: true });
    const second = await startKubeSim({ replacing: first });
    try {
      expect(second.port).toBe(first.port);
      const socket = tlsConnect({ host: second.host, port: second.port, rejectUnauthorized: false });
      await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      socket.destroy();
    } finally {
      await second.stop();
    }
  });
});
