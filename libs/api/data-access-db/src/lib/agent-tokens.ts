import type { DataSource, Repository } from 'typeorm';
import { hashOpaqueToken, newOpaqueToken } from '@ccos/api/util-secrets';
import { InstallRunEntity } from './entities/install-run.entity';

/** Agent tokens start with this prefix, so the HTTP layer can tell them from session tokens. */
export const AGENT_TOKEN_PREFIX = 'agt';

/** How long after its run ended a token still works: for the agent's last events and its diagnostics. */
export const AGENT_TOKEN_GRACE_MS = 10 * 60 * 1000;

/**
 * One-run agent tokens. Only the sha256 of a token is stored; a token authenticates for
 * its own run only, and stops working shortly after the run ends or at once when revoked.
 */
export class AgentTokens {
  private readonly runs: Repository<InstallRunEntity>;

  constructor(dataSource: DataSource) {
    this.runs = dataSource.getRepository(InstallRunEntity);
  }

  /** A new token for a run: the caller stores `hash` on the run and hands `token` to the agent. */
  issue(): { token: string; hash: string } {
    return newOpaqueToken(AGENT_TOKEN_PREFIX);
  }

  /** The run a token belongs to, or null for an unknown, expired or revoked token. */
  async authenticate(token: string | null | undefined): Promise<InstallRunEntity | null> {
    if (!token?.startsWith(`${AGENT_TOKEN_PREFIX}_`) || token.length > 200) {
      return null;
    }
    const run = await this.runs.findOneBy({ agentTokenHash: hashOpaqueToken(token) });
    if (!run || (run.agentTokenExpiresAt && run.agentTokenExpiresAt.getTime() < Date.now())) {
      return null;
    }
    return run;
  }

  /** Revokes every token of a node's runs (removal, credentials reset). */
  async revokeForNode(nodeId: string): Promise<void> {
    await this.runs.update({ nodeId }, { agentTokenHash: null, agentTokenExpiresAt: new Date() });
  }
}
