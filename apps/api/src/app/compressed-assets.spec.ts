import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { type Server, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compressedAssets } from './compressed-assets';

/** A raw GET (fetch would decode the body and hide the encoding). */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('compressedAssets', () => {
  let dir: string;
  let server: Server;
  let port: number;
  const script = `console.log(${JSON.stringify('ccos '.repeat(2000))});\n`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compressed-assets-'));
    await mkdir(join(dir, 'media'));
    await writeFile(join(dir, 'main-ABC123.js'), script);
    await writeFile(join(dir, 'styles-XYZ.css'), 'body { color: red; }\n'.repeat(100));
    await writeFile(join(dir, 'media', 'logo.png'), 'not compressed');
    await writeFile(join(tmpdir(), 'outside-compressed-assets.js'), 'secret');
    const app = express();
    app.use(compressedAssets(dir, 60));
    app.use(express.static(dir, { index: false }));
    app.use((_req, res) => res.status(404).send('not found'));
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
    await rm(join(tmpdir(), 'outside-compressed-assets.js'), { force: true });
  });

  it('sends scripts and styles gzip-compressed to a client that accepts gzip, with their type and a cache lifetime', async () => {
    const answer = await get(port, '/main-ABC123.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.headers['content-type']).toMatch(/^(application|text)\/javascript/);
    expect(answer.headers['vary']).toMatch(/accept-encoding/i);
    expect(answer.headers['cache-control']).toBe('public, max-age=60');
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
    expect(answer.body.length).toBeLessThan(script.length / 10);
    expect(gunzipSync(answer.body).toString()).toBe(script);
    const css = await get(port, '/styles-XYZ.css', { 'accept-encoding': 'gzip' });
    expect(css.headers['content-encoding']).toBe('gzip');
    expect(css.headers['content-type']).toMatch(/^text\/css/);
  });

  it('leaves clients that do not accept gzip, other files and HEAD-less misses to express.static', async () => {
    const plain = await get(port, '/main-ABC123.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(script);
    const refused = await get(port, '/main-ABC123.js', { 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    const image = await get(port, '/media/logo.png', { 'accept-encoding': 'gzip' });
    expect(image.headers['content-encoding']).toBeUndefined();
    expect(image.body.toString()).toBe('not compressed');
    expect((await get(port, '/missing.js', { 'accept-encoding': 'gzip' })).status).toBe(404);
  });

  it('serves nothing outside its folder', async () => {
    for (const path of ['/../outside-compressed-assets.js', '/%2e%2e/outside-compressed-assets.js', '/%2E%2E%2Foutside-compressed-assets.js', '/bad%ZZ.js']) {
      const answer = await get(port, path, { 'accept-encoding': 'gzip' });
      expect(answer.body.toString(), path).not.toContain('secret');
      expect(answer.headers['content-encoding'], path).toBeUndefined();
    }
  });

  it('compresses a file again when it changes', async () => {
    const file = join(dir, 'chunk-1.js');
    await writeFile(file, 'first();\n');
    expect(gunzipSync((await get(port, '/chunk-1.js', { 'accept-encoding': 'gzip' })).body).toString()).toBe('first();\n');
    await writeFile(file, 'second();\n');
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    expect(gunzipSync((await get(port, '/chunk-1.js', { 'accept-encoding': 'gzip' })).body).toString()).toBe('second();\n');
  });
});
