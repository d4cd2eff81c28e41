import type { DataSource, Repository } from 'typeorm';
import { hashOpaqueToken, newOpaqueToken } from '@ccos/api/util-secrets';
import { InstallRunEntity } from './entities/install-run.entity';

/** Agent tokens start with this prefix, so the HTTP layer can tell them from session tokens. */
export const AGENT_TOKEN_PREFIX = 'agt';

/** An agent token as presented: its hash, and the time at which it must still be valid ({@link AgentTokens.presented}). */
export interface AgentCredential {
  readonly hash: string;
  readonly validAt: Date;
}

/** How long after its run ended a token still works: for the agent's last events and its diagnostics. */
export const AGENT_TOKEN_GRACE_MS = 10 * 60 * 1000;

/**
 * One-run agent tokens. Only the sha256 of a token is stored; a token authenticates for its
 * own run only, until its expiry: the run's deadline while it runs (stalled or not), shortly
 * after the run ended (never past the deadline), or at once when revoked. A run without an
 * expiry is refused.
 */
export class AgentTokens {
  private readonly runs: Repository<InstallRunEntity>;

  constructor(
    dataSource: DataSource,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.runs = dataSource.getRepository(InstallRunEntity);
  }

  /** A new token for a run: the caller stores `hash` on the run and hands `token` to the agent. */
  issue(): { token: string; hash: string } {
    return newOpaqueToken(AGENT_TOKEN_PREFIX);
  }

  /** The run a token belongs to, or null for an unknown, expired or revoked token. */
  async authenticate(token: string | null | undefined): Promise<InstallRunEntity | null> {
    const credential = this.presented(token);
    if (!credential) {
      return null;
    }
    const run = await this.runs.findOneBy({ agentTokenHash: credential.hash });
    if (!run?.agentTokenExpiresAt || run.agentTokenExpiresAt.getTime() <= credential.validAt.getTime()) {
      return null;
    }
    return run;
  }

  /**
   * A token as a statement can check it (its hash, and now: it must expire later), for a store
   * that authenticates and writes in one round trip; null for what cannot be an agent token.
   */
  presented(token: string | null | undefined): AgentCredential | null {
    if (!token?.startsWith(`${AGENT_TOKEN_PREFIX}_`) || token.length > 200) {
      return null;
    }
    return { hash: hashOpaqueToken(token), validAt: this.now() };
  }

  /** When the token of a run that ends at `endedAt` stops working: after the grace, but never past the deadline. */
  static expiryAfterEnd(endedAt: Date, deadline: Date | null): Date {
    const afterGrace = endedAt.getTime() + AGENT_TOKEN_GRACE_MS;
    return new Date(deadline ? Math.min(afterGrace, deadline.getTime()) : afterGrace);
  }

  /** Revokes every token of a node's runs (removal, credentials reset). Returns how many of them still worked. */
  async revokeForNode(nodeId: string): Promise<number> {
    const live: Array<{ count: string }> = await this.runs.query(
      `SELECT count(*) AS count FROM install_runs WHERE node_id = $1 AND agent_token_hash IS NOT NULL AND (agent_token_expires_at IS NULL OR agent_token_expires_at > now())`,
      [nodeId],
    );
    await this.runs.update({ nodeId }, { agentTokenHash: null, agentTokenExpiresAt: this.now() });
    return Number(live[0]?.count ?? 0);
  }
}
