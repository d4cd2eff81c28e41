import type { IncomingMessage } from 'node:http';
import { Router, type Response } from 'express';
import type { AgentTokens, InstallRunEntity, InstallRunStore } from '@ccos/api/data-access-db';
import { answerWithoutReadingBody, bearerToken } from '@ccos/api/util-graphql';
import { roleAllows, type Role } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';

/** The largest diagnostics bundle accepted (the agent cuts its bundle to fit). */
export const MAX_DIAGNOSTICS_BYTES = 8 * 1024 * 1024;

/** Resolves a session bearer header to the user's role, or null. */
export type SessionRole = (authorization: string | undefined) => Promise<Role | null>;

class BodyTooLarge extends Error {}

/**
 * Answers without reading the request body: a small body is dropped after the answer and the
 * connection kept, a larger one is never pulled off the wire (see answerWithoutReadingBody).
 */
function refuseUnread(req: IncomingMessage, res: Response, status: number, error: string | CodedText): void {
  answerWithoutReadingBody(req, res);
  res.status(status).json(typeof error === 'string' ? { error } : { error: error.message, messageCode: error.code, messageParams: error.params });
}

/** The request body, read only up to `max` bytes; more is a {@link BodyTooLarge} and the reading stops. */
function readCapped(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

function tooLarge(size: number | null): string {
  const what = size === null ? `is larger than ${MAX_DIAGNOSTICS_BYTES} bytes` : `is ${size} bytes`;
  return `the diagnostics bundle ${what}; at most ${MAX_DIAGNOSTICS_BYTES} bytes (8 MiB) are accepted: cut the logs it carries (the agent does so itself)`;
}

/**
 * `POST /agent/diagnostics` — the agent of a failed run uploads its bundle (tar.gz, agent token),
 * once: 425 while the run is still RUNNING (the agent sends its FAILED event first and retries
 * this answer), 409 for a run that succeeded or was cancelled and for a second bundle (the first
 * is kept: what the operator reads is what the agent saw when the step failed);
 * `GET /api/install-runs/<id>/diagnostics.tar.gz` — an operator downloads it.
 *
 * The upload checks the token, the run and the declared size before it reads a byte of the
 * body, and reads at most {@link MAX_DIAGNOSTICS_BYTES}: a refused upload costs nothing.
 */
export function diagnosticsRoutes(runs: InstallRunStore, tokens: AgentTokens, sessionRole: SessionRole, onUploaded: (run: InstallRunEntity) => void): Router {
  const router = Router();

  router.post('/agent/diagnostics', async (req, res) => {
    const run = await tokens.authenticate(bearerToken(req.headers.authorization));
    if (!run) {
      refuseUnread(req, res, 401, 'a valid agent token is required');
      return;
    }
    if (run.status === 'RUNNING') {
      refuseUnread(req, res, 425, message('diagnostics.runNotFailedYet', { runId: run.id }));
      return;
    }
    if (run.status !== 'FAILED') {
      refuseUnread(req, res, 409, message('diagnostics.runNotFailed', { runId: run.id, runStatus: run.status }));
      return;
    }
    if (await runs.hasDiagnostics(run.id)) {
      refuseUnread(req, res, 409, message('diagnostics.alreadyUploaded', { runId: run.id }));
      return;
    }
    const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
    if (declared !== null && declared > MAX_DIAGNOSTICS_BYTES) {
      refuseUnread(req, res, 413, tooLarge(declared));
      return;
    }
    let content: Buffer;
    try {
      content = await readCapped(req, MAX_DIAGNOSTICS_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        refuseUnread(req, res, 413, tooLarge(null));
        return;
      }
      throw error;
    }
    if (content.length < 2 || content[0] !== 0x1f || content[1] !== 0x8b) {
      res.status(400).json({ error: 'the diagnostics bundle must be a gzip file (tar.gz)' });
      return;
    }
    if (!(await runs.saveDiagnostics(run.id, content, new Date()))) {
      // Another upload of the same run got in between the check above and this one.
      refuseUnread(req, res, 409, message('diagnostics.alreadyUploaded', { runId: run.id }));
      return;
    }
    onUploaded(run);
    res.status(204).end();
  });

  router.get('/api/install-runs/:id/diagnostics.tar.gz', async (req, res) => {
    const role = await sessionRole(req.headers.authorization);
    if (!role) {
      res.status(401).json({ error: 'sign in first' });
      return;
    }
    if (!roleAllows(role, 'OPERATOR')) {
      res.status(403).json({ error: 'diagnostics need the OPERATOR role' });
      return;
    }
    const id = String(req.params['id']);
    const bundle = await runs.diagnosticsOf(id);
    if (!bundle) {
      res.status(404).json({ error: `no diagnostics for install run ${id}` });
      return;
    }
    const run = await runs.find(id);
    res.setHeader('content-type', 'application/gzip');
    res.setHeader('content-disposition', `attachment; filename="diagnostics-${run?.nodeId ?? 'node'}-${id}.tar.gz"`);
    res.send(bundle.content);
  });
  return router;
}
