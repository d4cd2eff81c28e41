import type { NodeStore } from '@ccos/api/data-access-db';
import { message } from '@ccos/shared/messages';
import type { HostCommands } from '../host-commands';
import type { HostAccess } from '../removal-ports';
import { NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

export interface CleanHostPorts {
  readonly nodes: Pick<NodeStore, 'get'>;
  readonly hosts: HostAccess;
  readonly hostCommands: Pick<HostCommands, 'cleanHost'>;
}

/** CLEAN_HOST (only when the options ask for it): removes what the agent installed on the host. What it could not remove is recorded, not fatal. */
export class CleanHostPhase implements RemovalPhaseHandler {
  readonly phase = 'CLEAN_HOST' as const;

  constructor(private readonly ports: CleanHostPorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const { run } = ctx;
    const target = this.ports.hosts(await this.ports.nodes.get(run.nodeId));
    if (!target) {
      ctx.record({ kind: 'HOST_NOT_CLEANED', message: message('removal.event.noSshClean', { node: run.nodeName }) });
      return NEXT;
    }
    const result = await this.ports.hostCommands.cleanHost(target);
    ctx.record({ kind: result.ok ? 'HOST_CLEANED' : 'HOST_NOT_CLEANED', message: result.message, detail: { removed: result.removed } });
    return NEXT;
  }
}
