import { describe, expect, it } from 'vitest';
import { phaseHarness, runningRun } from '../../testing/phase-harness';
import { RevokeTokensPhase } from './revoke-tokens.phase';

describe('REVOKE_TOKENS', () => {
  it.each([
    [2, 'removal.event.tokensRevoked'],
    [0, 'removal.event.noTokens'],
  ])('revokes the node’s agent tokens (%i) and says how many', async (count, code) => {
    const run = runningRun({ phase: 'REVOKE_TOKENS' });
    const h = phaseHarness(run);
    const revokedFor: string[] = [];
    const phase = new RevokeTokensPhase({
      tokens: {
        revokeForNode: async (nodeId) => {
          revokedFor.push(nodeId);
          return count;
        },
      },
    });
    expect(await phase.run(h.ctx)).toEqual({ outcome: 'NEXT' });
    expect(revokedFor).toEqual([run.nodeId]);
    expect(h.events).toMatchObject([{ kind: 'TOKENS_REVOKED', message: { code }, detail: { revoked: count } }]);
  });
});
