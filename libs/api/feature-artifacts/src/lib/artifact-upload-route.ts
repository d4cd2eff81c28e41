import { Router } from 'express';
import { answerWithoutReadingBody } from '@ccos/api/util-graphql';
import { message } from '@ccos/shared/messages';
import { ArtifactImportError, type ArtifactSetStore, type ArtifactSetSummary } from './artifact-set-store';
import { refusalBody } from './refusal-body';

/** The role of whoever sent the request, or null when nobody is signed in. */
export type UploaderRole = (authorization: string | undefined) => Promise<{ readonly role: string; readonly username: string } | null>;

export interface ArtifactUploadOptions {
  readonly store: ArtifactSetStore;
  readonly uploader: UploaderRole;
  /** Largest upload taken (bytes). */
  readonly maxBytes: number;
  /** Told of every import, taken or refused (the audit log). */
  readonly onImport?: (event: { readonly username: string; readonly outcome: 'IMPORTED' | 'REFUSED'; readonly version: string | null; readonly detail: string }) => void;
}

/**
 * `POST /admin/artifact-sets`: an ADMIN uploads one release's set as a tar archive
 * (`manifest.json` + `binary/`, `rpm/`, `unit/`), streamed straight into the store's staging
 * folder and checked there. 201 with the stored set; 422 naming every problem and missing file,
 * with the set in use before left as it was.
 */
export function artifactUploadRoutes(options: ArtifactUploadOptions): Router {
  const router = Router();
  router.post('/admin/artifact-sets', async (req, res) => {
    const user = await options.uploader(req.headers.authorization);
    if (!user) {
      answerWithoutReadingBody(req, res);
      res.status(401).setHeader('www-authenticate', 'Bearer').json(refusalBody(message('artifacts.uploadNeedsSignIn')));
      return;
    }
    if (user.role !== 'ADMIN') {
      answerWithoutReadingBody(req, res);
      res.status(403).json(refusalBody(message('artifacts.uploadNeedsAdmin', { held: user.role })));
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
    if (type !== 'application/x-tar' && type !== 'application/octet-stream') {
      answerWithoutReadingBody(req, res);
      res.status(415).json(refusalBody(message('artifacts.uploadNotTar')));
      return;
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > options.maxBytes) {
      answerWithoutReadingBody(req, res);
      res.status(413).json(refusalBody(message('artifacts.uploadTooLarge', { declared: String(declared), max: String(options.maxBytes) })));
      return;
    }
    let received = 0;
    const limited = (async function* () {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        received += chunk.length;
        if (received > options.maxBytes) {
          throw new Error(`the upload is larger than ${options.maxBytes} bytes (ARTIFACT_UPLOAD_MAX_BYTES)`);
        }
        yield chunk;
      }
    })();
    let summary: ArtifactSetSummary;
    try {
      summary = await options.store.importTar(limited);
    } catch (error) {
      // Whatever is left of the body is not read: close the connection after the answer.
      res.setHeader('connection', 'close');
      if (error instanceof ArtifactImportError) {
        options.onImport?.({ username: user.username, outcome: 'REFUSED', version: null, detail: error.message });
        res.status(422).json({ error: error.message, problems: error.problems, missing: error.missing });
        return;
      }
      throw error;
    }
    options.onImport?.({ username: user.username, outcome: 'IMPORTED', version: summary.version, detail: `${summary.artifacts} artifacts, ${summary.bytes} bytes` });
    res.status(201).json(summary);
  });
  return router;
}
