import { message } from '@ccos/shared/messages';
import type { CsrLeftovers } from '../removal-ports';
import { errorText, NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

/** What the denial of a removed node's leftover CSRs says. */
export const CSR_DENY_REASON = 'node removed';

export interface DenyCsrsPorts {
  readonly csrs: CsrLeftovers;
}

/** DENY_CSRS: denies the node's pending CSRs, so none of them can be approved for a node that is gone. Denials that fail are recorded, not fatal. */
export class DenyCsrsPhase implements RemovalPhaseHandler {
  readonly phase = 'DENY_CSRS' as const;

  constructor(private readonly ports: DenyCsrsPorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const { run } = ctx;
    const names = await this.ports.csrs.pendingCsrNamesFor(run.clusterId, run.nodeName);
    const denied: string[] = [];
    const failed: Array<{ name: string; error: string }> = [];
    for (const name of names) {
      try {
        await this.ports.csrs.deny(run.clusterId, name, run.requestedBy, CSR_DENY_REASON);
        denied.push(name);
      } catch (error) {
        failed.push({ name, error: errorText(error) });
      }
    }
    ctx.record({
      kind: 'CSRS_DENIED',
      message:
        names.length === 0
          ? message('removal.event.noCsrs', { node: run.nodeName })
          : failed.length === 0
            ? message('removal.event.csrsDenied', { count: denied.length, node: run.nodeName, csrs: denied.join(', ') })
            : message('removal.event.csrsDeniedSome', { count: denied.length, node: run.nodeName, csrs: denied.join(', '), failed: failed.map((f) => `${f.name} (${f.error})`).join(', ') }),
      detail: { denied, failed },
    });
    return NEXT;
  }
}
