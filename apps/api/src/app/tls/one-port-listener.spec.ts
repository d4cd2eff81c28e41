import { X509Certificate } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer as createPlainServer, request as plainRequest } from 'node:http';
import { createServer as createTlsServer, request as tlsRequest } from 'node:https';
import { connect as connectTcp } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertifiedKey, generateCertificateAuthority, issueServerCertificate } from './certificates';
import { type OnePortListener, listenOnOnePort } from './one-port-listener';

describe('TLS and plain HTTP on one port', () => {
  let ca: CertifiedKey;
  let server: CertifiedKey;
  let listener: OnePortListener;
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.end(JSON.stringify({ secure: 'encrypted' in req.socket, bytes })));
  };

  beforeAll(async () => {
    ca = await generateCertificateAuthority('test CA');
    server = await issueServerCertificate(ca, ['localhost', '127.0.0.1'], 30);
    listener = await listenOnOnePort({
      port: 0,
      host: '127.0.0.1',
      tls: createTlsServer({ cert: server.certPem, key: server.keyPem }, answer),
      plain: createPlainServer(answer),
      firstByteTimeoutMs: 300,
    });
  });
  afterAll(async () => {
    await listener?.close(1_000);
  });

  const post = (secure: boolean, body: Buffer) =>
    new Promise<{ secure: boolean; bytes: number }>((resolve, reject) => {
      const send = secure ? tlsRequest : plainRequest;
      const req = send({ host: '127.0.0.1', port: listener.port, method: 'POST', path: '/', agent: false, ...(secure ? { ca: ca.certPem } : {}) }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(JSON.parse(text)));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('hands a connection that opens with a TLS handshake to the HTTPS server and any other to plain HTTP, bytes intact', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    const before = { ...listener.accepted };
    expect(await post(true, big)).toEqual({ secure: true, bytes: big.length });
    expect(await post(false, big)).toEqual({ secure: false, bytes: big.length });
    expect(await post(true, Buffer.from('x'))).toEqual({ secure: true, bytes: 1 });
    expect(listener.accepted.tls - before.tls).toBe(2);
    expect(listener.accepted.plain - before.plain).toBe(1);
  });

  it('serves the certificate it was given, verified against its CA and naming 127.0.0.1', async () => {
    const peer = await new Promise<X509Certificate>((resolve, reject) => {
      const socket = connectTls({ host: '127.0.0.1', port: listener.port, ca: ca.certPem }, () => {
        resolve(new X509Certificate(socket.getPeerCertificate().raw));
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(peer.fingerprint256).toBe(new X509Certificate(server.certPem).fingerprint256);
  });

  it('drops a client that connects and sends nothing', async () => {
    const closedAfter = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = connectTcp(listener.port, '127.0.0.1');
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', () => undefined);
    });
    expect(closedAfter).toBeGreaterThanOrEqual(250);
    expect(closedAfter).toBeLessThan(5_000);
  });
});
