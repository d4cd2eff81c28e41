import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { answerWithoutReadingBody } from './unread-body';

/** A server that refuses every POST with 401 before reading a byte of its body, and answers a GET with 200. */
async function refusingServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.end('ok');
      return;
    }
    answerWithoutReadingBody(req, res);
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"a valid agent token is required"}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

interface RawClient {
  readonly socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  reset(): boolean;
  closed(): boolean;
  /** Sends headers declaring `declared` bytes (chunked when null) and up to `total` bytes of body; returns what was sent before the server closed. */
  upload(declared: number | null, total: number): Promise<number>;
  until(condition: () => boolean, timeoutMs: number): Promise<void>;
}

/** A client on a raw socket, reading nothing for `readAfterMs` as a client busy sending would. */
async function rawClient(port: number, readAfterMs = 0): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let reset = false;
  let closed = false;
  if (readAfterMs > 0) {
    socket.pause();
    setTimeout(() => socket.resume(), readAfterMs);
  }
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', (error: NodeJS.ErrnoException) => (reset ||= error.code === 'ECONNRESET' || error.code === 'EPIPE'));
  socket.once('close', () => (closed = true));
  const until = async (condition: () => boolean, timeoutMs: number) => {
    for (const started = Date.now(); !condition(); await new Promise((wake) => setTimeout(wake, 10))) {
      if (Date.now() - started > timeoutMs) {
        throw new Error(`not within ${timeoutMs} ms; received ${JSON.stringify(received.slice(0, 200))}, closed ${closed}, reset ${reset}`);
      }
    }
  };
  return {
    socket,
    received: () => received,
    reset: () => reset,
    closed: () => closed,
    until,
    async upload(declared, total) {
      socket.write(`POST /agent/diagnostics HTTP/1.1\r\nHost: x\r\n${declared === null ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024);
      let sent = 0;
      while (sent < total && !closed && !socket.destroyed) {
        const size = Math.min(piece.length, total - sent);
        const data = declared === null ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece.subarray(0, size), Buffer.from('\r\n')]) : piece.subarray(0, size);
        const flushed = socket.write(data);
        sent += size;
        if (!flushed) {
          await Promise.race([once(socket, 'drain').catch(() => undefined), until(() => closed, 60_000)]);
        }
      }
      return sent;
    },
  };
}

describe('answerWithoutReadingBody', () => {
  let server: Server | null = null;
  afterEach(() => {
    server?.close();
    server?.closeAllConnections();
    server = null;
  });

  it('lets twenty clients that send a 512 KiB upload at once read the refusal, and reuse their connections', async () => {
    const refusing = await refusingServer();
    server = refusing.server;
    const url = `http://127.0.0.1:${refusing.port}/agent/diagnostics`;
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const refused = await fetch(url, { method: 'POST', body: Buffer.alloc(512 * 1024) });
          const refusal = `${refused.status} ${await refused.text()}`;
          const next = await fetch(url);
          return `${refusal}; then ${next.status} ${await next.text()}`;
        }),
      );
      expect(new Set(answers)).toEqual(new Set(['401 {"error":"a valid agent token is required"}; then 200 ok']));
    }
  });

  it('keeps the refusal for a client that reads it only after sending its whole body, and keeps the connection', async () => {
    const refusing = await refusingServer();
    server = refusing.server;
    const client = await rawClient(refusing.port, 300);
    expect(await client.upload(1024 * 1024, 1024 * 1024)).toBe(1024 * 1024);
    await client.until(() => client.received().includes('a valid agent token is required'), 5000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(client.reset()).toBe(false);
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await client.until(() => client.received().endsWith('ok'), 5000);
    expect(client.closed()).toBe(false);
    client.socket.destroy();
  });

  it('ends the connection after refusing a body larger than it reads, before the client has sent it', async () => {
    const refusing = await refusingServer();
    server = refusing.server;
    const client = await rawClient(refusing.port);
    const sent = await client.upload(256 * 1024 * 1024, 256 * 1024 * 1024);
    await client.until(() => client.closed(), 5000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 401 .*connection: close/is);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('ends the connection after refusing a body of unknown length', async () => {
    const refusing = await refusingServer();
    server = refusing.server;
    const client = await rawClient(refusing.port);
    const sent = await client.upload(null, 256 * 1024 * 1024);
    await client.until(() => client.closed(), 5000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });
});
