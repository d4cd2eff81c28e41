import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { gzip } from 'node:zlib';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** The console's build output that compresses well and is fetched on every first visit. */
const COMPRESSIBLE = new Set(['.js', '.css']);

/**
 * Serves the built console's scripts and styles gzip-compressed to clients that accept it (the
 * sign-in page's JavaScript shrinks about fourfold); everything else, and clients that do not,
 * fall through to `express.static`. Each file is compressed once and kept, keyed by its
 * modification time: the build's file names carry a content hash, so the set is small and fixed.
 */
export function compressedAssets(dir: string, maxAgeSeconds = 3600): RequestHandler {
  const root = resolve(dir);
  const cache = new Map<string, { mtimeMs: number; body: Promise<Buffer> }>();
  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !COMPRESSIBLE.has(extname(req.path)) || !req.acceptsEncodings('gzip')) {
      next();
      return;
    }
    let path: string;
    try {
      path = resolve(root, `.${decodeURIComponent(req.path)}`);
    } catch {
      next();
      return;
    }
    if (!path.startsWith(`${root}${sep}`) || path.includes('\0')) {
      next();
      return;
    }
    stat(path).then(
      async (info) => {
        if (!info.isFile()) {
          next();
          return;
        }
        let entry = cache.get(path);
        if (entry?.mtimeMs !== info.mtimeMs) {
          const body = readFile(path).then((raw) => new Promise<Buffer>((done, fail) => gzip(raw, { level: 9 }, (error, zipped) => (error ? fail(error) : done(zipped)))));
          entry = { mtimeMs: info.mtimeMs, body };
          cache.set(path, entry);
          body.catch(() => cache.delete(path));
        }
        const body = await entry.body;
        res.vary('accept-encoding');
        res.type(extname(path));
        res.setHeader('content-encoding', 'gzip');
        res.setHeader('content-length', body.length);
        res.setHeader('cache-control', `public, max-age=${maxAgeSeconds}`);
        res.setHeader('last-modified', info.mtime.toUTCString());
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => next(),
    ).catch(next);
  };
}
