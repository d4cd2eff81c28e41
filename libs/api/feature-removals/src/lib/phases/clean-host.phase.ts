import type { NodeStore } from '@ccos/api/data-access-db';
import { message } from '@ccos/shared/messages';
import type { HostCommands } from '../host-commands';
import type { HostAccess } from '../removal-ports';
import { type HostWaitPorts, leaveHostAsItIs, untilHostAnswers } from './host-wait';
import { NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

export interface CleanHostPorts extends HostWaitPorts {
  readonly nodes: Pick<NodeStore, 'get' | 'update'>;
  readonly hosts: HostAccess;
  readonly hostCommands: Pick<HostCommands, 'cleanHost'>;
}

/**
 * CLEAN_HOST (only when the options ask for it): removes what the agent installed on the host. A
 * host that does not answer is waited for as STOP_KUBELET does; what could not be removed, or a
 * wait that ran out, is recorded, not fatal (the Node is gone by now).
 */
export class CleanHostPhase implements RemovalPhaseHandler {
  readonly phase = 'CLEAN_HOST' as const;

  constructor(private readonly ports: CleanHostPorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const { run } = ctx;
    const node = await this.ports.nodes.get(run.nodeId);
    const target = this.ports.hosts(node);
    if (!target) {
      ctx.record({ kind: 'HOST_NOT_CLEANED', message: message('removal.event.noSshClean', { node: run.nodeName }) });
      return NEXT;
    }
    const wait = await untilHostAnswers(
      ctx,
      this.ports,
      target.host,
      (signal) => this.ports.hostCommands.cleanHost(target, signal),
      (result) => (result.reached ? null : result.message),
    );
    switch (wait.outcome) {
      case 'INTERRUPTED':
        return wait;
      case 'EXPIRED':
        ctx.record({ kind: 'HOST_NOT_CLEANED', message: wait.reason });
        return NEXT;
      case 'SKIPPED':
        await leaveHostAsItIs(ctx, this.ports, node, wait.skip);
        ctx.record({ kind: 'HOST_NOT_CLEANED', message: message('removal.host.cleanSkipped', { actor: wait.skip.actor }) });
        return NEXT;
      case 'ANSWERED':
        ctx.record({ kind: wait.value.ok ? 'HOST_CLEANED' : 'HOST_NOT_CLEANED', message: wait.value.message, detail: { removed: wait.value.removed } });
        return NEXT;
    }
  }
}
