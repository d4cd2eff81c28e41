import type { NodeStore } from '@ccos/api/data-access-db';
import { bare, message } from '@ccos/shared/messages';
import type { HostCommands } from '../host-commands';
import type { HostAccess } from '../removal-ports';
import { failed, NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

export interface StopKubeletPorts {
  readonly nodes: Pick<NodeStore, 'get'>;
  readonly hosts: HostAccess;
  readonly hostCommands: Pick<HostCommands, 'stopKubelet'>;
}

/**
 * STOP_KUBELET: stops and disables the kubelet over SSH, so it does not register the Node again
 * once it is deleted. A host without SSH access or out of reach is recorded and passed; a kubelet
 * that would not stop ends the run before the Node is deleted.
 */
export class StopKubeletPhase implements RemovalPhaseHandler {
  readonly phase = 'STOP_KUBELET' as const;

  constructor(private readonly ports: StopKubeletPorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const { run } = ctx;
    const node = await this.ports.nodes.get(run.nodeId);
    const target = this.ports.hosts(node);
    if (!target) {
      ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: message('removal.event.noSshKubelet', { node: run.nodeName, discovered: node.origin === 'DISCOVERED' }) });
      return NEXT;
    }
    const result = await this.ports.hostCommands.stopKubelet(target);
    switch (result.outcome) {
      case 'STOPPED':
        ctx.record({ kind: 'KUBELET_STOPPED', message: result.message });
        return NEXT;
      case 'NOT_INSTALLED':
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: result.message });
        return NEXT;
      case 'UNREACHABLE':
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: message('removal.event.hostUnreachable', { error: bare(result.message) }) });
        return NEXT;
      case 'FAILED':
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: result.message });
        return failed(message('removal.kubeletNotStopped', { error: bare(result.message) }));
    }
  }
}
