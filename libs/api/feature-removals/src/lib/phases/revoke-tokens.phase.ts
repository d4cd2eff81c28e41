import type { AgentTokens } from '@ccos/api/data-access-db';
import { message } from '@ccos/shared/messages';
import { NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

export interface RevokeTokensPorts {
  readonly tokens: Pick<AgentTokens, 'revokeForNode'>;
}

/** REVOKE_TOKENS: revokes the agent tokens of the node's install runs, so nothing on the host can report for it again. */
export class RevokeTokensPhase implements RemovalPhaseHandler {
  readonly phase = 'REVOKE_TOKENS' as const;

  constructor(private readonly ports: RevokeTokensPorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const count = await this.ports.tokens.revokeForNode(ctx.run.nodeId);
    ctx.record({ kind: 'TOKENS_REVOKED', message: count > 0 ? message('removal.event.tokensRevoked', { count }) : message('removal.event.noTokens'), detail: { revoked: count } });
    return NEXT;
  }
}
