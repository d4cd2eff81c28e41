import { createReadStream } from 'node:fs';
import { Router, type Request, type Response } from 'express';
import { message } from '@ccos/shared/messages';
import type { ArtifactCatalog } from './artifact-catalog';
import { parseRange } from './byte-range';
import { refusalBody } from './refusal-body';

/**
 * The set a request downloads from: an agent's, its run's cluster's set; a signed-in user's, the
 * default one. Null when the request may not download (no valid agent token or session).
 */
export type ArtifactAccess = (authorization: string | undefined) => Promise<ArtifactCatalog | null>;

/**
 * Bytes read from disk per chunk of a download. With Node's default (64 KiB) each chunk costs a
 * read, a socket write and a turn of the event loop. Measured with bench/artifact-serving.ts on
 * 2 cores (2026-12-07, seven runs each, nginx beside): 8 downloads of 512 MiB at once went from
 * 0.69–0.92× nginx to 0.82–1.26× (median 1.18×), a resumed download from 0.61–0.64× to 0.57–0.98×
 * (median 0.85×); 1 MiB chunks did worse than 256 KiB (0.72–0.81×).
 */
const ARTIFACT_CHUNK_BYTES = 256 * 1024;

/**
 * `GET|HEAD /artifacts/manifest` and `GET|HEAD /artifacts/<kind>/<name>`, streamed from
 * the catalog with a strong ETag (the sha256), `Range`/206 for resumed downloads,
 * `If-Range` and `If-None-Match`.
 */
export function artifactRoutes(catalogFor: ArtifactAccess): Router {
  const router = Router();
  // Chosen once per request by the access check, so a manifest and its files come from one set.
  const catalogOf = (res: Response): ArtifactCatalog => res.locals['catalog'] as ArtifactCatalog;
  router.use(async (req, res, next) => {
    const catalog = await catalogFor(req.headers.authorization);
    if (catalog) {
      res.locals['catalog'] = catalog;
      next();
    } else {
      res.status(401).setHeader('www-authenticate', 'Bearer').json(refusalBody(message('artifacts.agentTokenRequired')));
    }
  });
  router.get('/manifest', async (_req, res) => {
    const document = await catalogOf(res).manifestDocument();
    res.setHeader('cache-control', 'no-store, no-transform');
    res.setHeader('etag', `"${document.sha256}"`);
    res.type('application/json').send(document.bytes);
  });
  router.get('/:kind/:name', async (req: Request<{ kind: string; name: string }>, res: Response) => {
    const artifact = await catalogOf(res).find(req.params.kind, req.params.name);
    if (!artifact) {
      res.status(404).json(refusalBody(message('artifacts.noSuchArtifact', { kind: String(req.params.kind), name: String(req.params.name) })));
      return;
    }
    const etag = `"${artifact.sha256}"`;
    res.setHeader('etag', etag);
    res.setHeader('accept-ranges', 'bytes');
    res.setHeader('last-modified', artifact.modifiedAt.toUTCString());
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('cache-control', 'private, no-transform');
    if (req.headers['if-none-match'] === etag) {
      res.status(304).end();
      return;
    }
    // A range only applies to the file version the client already has part of.
    const ifRange = req.headers['if-range'];
    const range = ifRange && ifRange !== etag ? null : parseRange(req.headers.range, artifact.size);
    if (range === 'unsatisfiable') {
      res.status(416).setHeader('content-range', `bytes */${artifact.size}`).end();
      return;
    }
    const { start, end } = range ?? { start: 0, end: artifact.size - 1 };
    if (range) {
      res.status(206).setHeader('content-range', `bytes ${start}-${end}/${artifact.size}`);
    }
    res.setHeader('content-length', String(Math.max(0, end - start + 1)));
    if (req.method === 'HEAD' || artifact.size === 0) {
      res.end();
      return;
    }
    const stream = createReadStream(artifact.path, { start, end, highWaterMark: ARTIFACT_CHUNK_BYTES });
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  });
  return router;
}
