import { X509Certificate } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, type Socket } from 'node:net';
import { type Server, createServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCertificate, testCertificate } from '../testing/test-certificates';
import { HttpError, NodeHttp, readBody } from './http';
import { CERT_NOT_PINNED, type TlsPin, publicKeySha256 } from './tls-pin';

/**
 * A TLS server that answers every request "ok" and records every byte that reached
 * it after the handshake: a refused pin must leave that record empty (the bearer
 * token never reaches a server the agent does not trust).
 */
async function tlsServer(certificate: TestCertificate): Promise<{ url: string; received: () => string; close: () => Promise<void> }> {
  let received = '';
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: certificate.certPem, key: certificate.keyPem }, (socket) => {
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n\r\n')) {
        socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
      }
    });
    socket.on('error', () => undefined);
  });
  // A client that refuses the certificate may leave its TCP connection mid-handshake, where the
  // secure-connection handler never sees it; close() would wait for it forever.
  server.on('connection', (socket: Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close(() => resolve());
    }),
  };
}

/** Closes `server` without waiting for connections a test left hanging (a paused socket never notices the client left). */
function closer(server: Server): { close: () => Promise<void> } {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    close: () => new Promise((resolve) => {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close(() => resolve());
    }),
  };
}

describe('pinned HTTPS (real TLS servers on loopback)', () => {
  const http = new NodeHttp('test/1');
  let serviceCa: TestCertificate;
  let otherCa: TestCertificate;
  let service: TestCertificate;
  const servers: Array<{ close: () => Promise<void> }> = [];

  beforeAll(async () => {
    serviceCa = await testCertificate({ commonName: 'ccos-scaler agent channel CA', ca: true });
    otherCa = await testCertificate({ commonName: 'corporate CA', ca: true });
    service = await testCertificate({ commonName: 'ccos-scaler', issuer: serviceCa, dnsNames: ['scaler.example.com'] });
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });
  const serve = async (certificate: TestCertificate) => {
    const server = await tlsServer(certificate);
    servers.push(server);
    return server;
  };
  const get = (url: string, pin: TlsPin) => http.request({ method: 'GET', url: `${url}/healthz`, headers: { authorization: 'Bearer agt_secret-token' }, pin });

  it('accepts the service whose chain ends at the pinned private CA, although the certificate does not name the address', async () => {
    const server = await serve(service);
    const response = await get(server.url, { caCertificates: serviceCa.certPem });
    expect(response.status).toBe(200);
    expect((await readBody(response)).toString()).toBe('ok');
    expect(server.received()).toContain('authorization: Bearer agt_secret-token');
  });

  it.each([
    ['a certificate from another CA', () => testCertificate({ commonName: 'ccos-scaler', issuer: otherCa, dnsNames: ['scaler.example.com'] }), /chain does not lead to the pinned CA/],
    ['a self-signed certificate with the same name', () => testCertificate({ commonName: 'ccos-scaler', dnsNames: ['scaler.example.com'] }), /chain does not lead to the pinned CA/],
  ])('refuses %s before sending a byte of the request', async (_name, make, reason) => {
    const impostor = await make();
    const server = await serve(impostor);
    const error = await get(server.url, { caCertificates: serviceCa.certPem }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: CERT_NOT_PINNED });
    const message = (error as Error).message;
    expect(message).toMatch(/^the service's certificate at 127\.0\.0\.1:\d+ \(sha256 fingerprint [0-9A-F:]{95}, subject "CN=ccos-scaler", issuer "CN=[^"]+"\) is not the pinned one: /);
    expect(message).toContain(new X509Certificate(impostor.certPem).fingerprint256);
    expect(message).toMatch(reason);
    expect(server.received()).toBe('');
  });

  it('with a CA that signs other servers too, keeps checking the name', async () => {
    const corporate = await testCertificate({ commonName: 'other.example.com', issuer: otherCa, dnsNames: ['other.example.com'], ips: ['127.0.0.1'] });
    const server = await serve(corporate);
    // The same CA, the certificate names the address: accepted.
    expect((await get(server.url, { caCertificates: otherCa.certPem, verifyHostname: true })).status).toBe(200);
    // Another server the same CA signed, under another name: refused.
    const other = await serve(await testCertificate({ commonName: 'intranet', issuer: otherCa, dnsNames: ['intranet.example.com'] }));
    const error = await get(other.url, { caCertificates: otherCa.certPem, verifyHostname: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: CERT_NOT_PINNED, message: expect.stringMatching(/does not name 127\.0\.0\.1/) });
    expect(other.received()).toBe('');
  });

  it('pins the leaf key: only that key is accepted, whoever signed it, and only while the certificate is valid', async () => {
    const leaf = await testCertificate({ commonName: 'scaler', issuer: otherCa });
    const pinned = publicKeySha256(new X509Certificate(leaf.certPem));
    const server = await serve(leaf);
    expect((await get(server.url, { publicKeySha256: ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', pinned] })).status).toBe(200);

    const sameCaOtherKey = await serve(await testCertificate({ commonName: 'scaler', issuer: otherCa }));
    const refused = await get(sameCaOtherKey.url, { publicKeySha256: [pinned] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: CERT_NOT_PINNED, message: expect.stringContaining(`is not the pinned ${pinned}`) });
    expect(sameCaOtherKey.received()).toBe('');
  });

  it('refuses an expired certificate even when its key is pinned', async () => {
    const expired = await testCertificate({ commonName: 'scaler', notAfter: new Date(Date.now() - 3600_000) });
    const server = await serve(expired);
    const error = await get(server.url, { publicKeySha256: [publicKeySha256(new X509Certificate(expired.certPem))] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: CERT_NOT_PINNED, message: expect.stringMatching(/it is valid only from .* to /) });
    expect(server.received()).toBe('');
  });

  it('gives up on a body that stalls after the pin held (a cut link), as on plain HTTP', async () => {
    const stalling = createServer({ cert: service.certPem, key: service.keyPem }, (socket) => {
      socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789'));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    servers.push(closer(stalling));
    const url = `https://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
    const response = await http.request({ method: 'GET', url, pin: { caCertificates: serviceCa.certPem }, idleTimeoutMs: 200 });
    const error = await readBody(response).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ETIMEDOUT' });
    // And a server that never finishes the handshake.
    const silent = createServer({ cert: service.certPem, key: service.keyPem });
    silent.on('connection', (socket: Socket) => socket.pause());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    servers.push(closer(silent));
    const mute = await http.request({ method: 'GET', url: `https://127.0.0.1:${(silent.address() as AddressInfo).port}`, pin: { caCertificates: serviceCa.certPem }, idleTimeoutMs: 200 }).catch((e: unknown) => e);
    expect(mute).toMatchObject({ code: 'ETIMEDOUT', message: expect.stringContaining('silent for') });
  });

  it('names a refused connection as before (no TLS involved)', async () => {
    const server = await serve(service);
    const port = new URL(server.url).port;
    await server.close();
    const error = await get(`https://127.0.0.1:${port}`, { caCertificates: serviceCa.certPem }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
  });

  /** An HTTPS server answering "ok <n>" that counts the TLS handshakes it completed; `onRequest` may drop a request instead. */
  const countingServer = async (onRequest: (index: number, socket: Socket) => 'answer' | 'drop' = () => 'answer') => {
    let handshakes = 0;
    let requests = 0;
    const server = createHttpsServer({ cert: service.certPem, key: service.keyPem }, (req, res) => {
      requests += 1;
      if (onRequest(requests, req.socket) === 'drop') {
        req.socket.destroy();
        return;
      }
      res.end(`ok ${requests}`);
    });
    server.on('secureConnection', () => (handshakes += 1));
    servers.push(closer(server as unknown as Server));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, handshakes: () => handshakes };
  };

  it('keeps the pinned connection for the next requests: a step\'s downloads cost one handshake, not one each', async () => {
    const server = await countingServer();
    const pin = { caCertificates: serviceCa.certPem };
    const bodies: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      bodies.push((await readBody(await get(server.url, pin))).toString());
    }
    expect(bodies).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5']);
    expect(server.handshakes()).toBe(1);
    // A kept connection is this pin's only: another pin for the same address is checked on its own connection.
    const refused = await get(server.url, { caCertificates: otherCa.certPem }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: CERT_NOT_PINNED });
  });

  it('sends a request once more on a fresh, pinned connection when the server dropped the kept one', async () => {
    // The server drops the kept connection at the second request without answering, as one whose keep-alive ran out would.
    const server = await countingServer((index) => (index === 2 ? 'drop' : 'answer'));
    const pin = { caCertificates: serviceCa.certPem };
    expect((await readBody(await get(server.url, pin))).toString()).toBe('ok 1');
    expect((await readBody(await get(server.url, pin))).toString()).toBe('ok 3');
    expect(server.handshakes()).toBe(2);
  });
});
