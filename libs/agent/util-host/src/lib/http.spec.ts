import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpError, NodeHttp, readBody } from './http';

describe('NodeHttp (against an in-process server)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });
  const listen = async (handler: Parameters<typeof createServer>[1]): Promise<string> => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  it('sends headers and body and reads the answer', async () => {
    const url = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => res.writeHead(200, { 'X-Echo': String(req.headers['authorization']), 'Content-Type': 'text/plain' }).end(`got ${body}`));
    });
    const response = await new NodeHttp('test/1').request({ method: 'POST', url: `${url}/x`, headers: { Authorization: 'Bearer t' }, body: 'hi' });
    expect(response.status).toBe(200);
    expect(response.headers['x-echo']).toBe('Bearer t');
    expect((await readBody(response)).toString()).toBe('got hi');
  });

  it('fails a body that stalls (a cut link) after the idle timeout', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('x'.repeat(10));
    });
    const response = await new NodeHttp('test/1').request({ method: 'GET', url, idleTimeoutMs: 200 });
    const error = await readBody(response).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: 'ETIMEDOUT', message: expect.stringContaining('silent for 0 s') });
  });

  it('reports a connection cut mid-body', async () => {
    const url = await listen((req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('x'.repeat(10), () => req.socket.destroy());
    });
    const response = await new NodeHttp('test/1').request({ method: 'GET', url });
    const error = await readBody(response).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
  });

  it('names a refused connection', async () => {
    const url = await listen((_req, res) => res.end());
    const port = (server?.address() as AddressInfo).port;
    server?.close();
    const error = await new NodeHttp('test/1').request({ method: 'GET', url: `http://127.0.0.1:${port}/` }).catch((e: unknown) => e);
    expect(url).toContain(String(port));
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('gives up when no headers come in time', async () => {
    const url = await listen(() => undefined);
    const error = await new NodeHttp('test/1').request({ method: 'GET', url, timeoutMs: 150, idleTimeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ETIMEDOUT' });
  });
});
