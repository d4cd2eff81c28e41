import express, { Router } from 'express';
import type { DataSource } from 'typeorm';
import { type AgentTokens, InstallDiagnosticsEntity, InstallRunEntity, isUuid } from '@ccos/api/data-access-db';
import { bearerToken } from '@ccos/api/util-graphql';
import { roleAllows, type Role } from '@ccos/shared/domain';

export const MAX_DIAGNOSTICS_BYTES = 8 * 1024 * 1024;

/** Resolves a session bearer header to the user's role, or null. */
export type SessionRole = (authorization: string | undefined) => Promise<Role | null>;

/**
 * `POST /agent/diagnostics` — the agent of a failed run uploads its bundle (tar.gz, agent token);
 * `GET /api/install-runs/<id>/diagnostics.tar.gz` — an operator downloads it.
 */
export function diagnosticsRoutes(dataSource: DataSource, tokens: AgentTokens, sessionRole: SessionRole, onUploaded: (run: InstallRunEntity) => void): Router {
  const router = Router();
  const bundles = dataSource.getRepository(InstallDiagnosticsEntity);

  router.post(
    '/agent/diagnostics',
    express.raw({ type: () => true, limit: MAX_DIAGNOSTICS_BYTES }),
    async (req, res) => {
      const token = bearerToken(req.headers.authorization);
      const run = await tokens.authenticate(token);
      if (!run) {
        res.status(401).json({ error: 'a valid agent token is required' });
        return;
      }
      const content = req.body as Buffer;
      if (!Buffer.isBuffer(content) || content.length < 2 || content[0] !== 0x1f || content[1] !== 0x8b) {
        res.status(400).json({ error: 'the diagnostics bundle must be a gzip file (tar.gz)' });
        return;
      }
      await bundles.upsert({ runId: run.id, content, size: content.length, uploadedAt: new Date() }, ['runId']);
      onUploaded(run);
      res.status(204).end();
    },
  );

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
    const bundle = isUuid(id) ? await bundles.findOneBy({ runId: id }) : null;
    if (!bundle) {
      res.status(404).json({ error: `no diagnostics for install run ${id}` });
      return;
    }
    const run = await dataSource.getRepository(InstallRunEntity).findOneBy({ id });
    res.setHeader('content-type', 'application/gzip');
    res.setHeader('content-disposition', `attachment; filename="diagnostics-${run?.nodeId ?? 'node'}-${id}.tar.gz"`);
    res.send(bundle.content);
  });
  return router;
}
