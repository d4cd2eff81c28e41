import type { NodeStore } from '@ccos/api/data-access-db';
import { bare, message } from '@ccos/shared/messages';
import type { HostCommands } from '../host-commands';
import type { HostAccess } from '../removal-ports';
import { type HostWaitPorts, leaveHostAsItIs, untilHostAnswers } from './host-wait';
import { failed, NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

export interface StopKubeletPorts extends HostWaitPorts {
  readonly nodes: Pick<NodeStore, 'get' | 'update'>;
  readonly hosts: HostAccess;
  readonly hostCommands: Pick<HostCommands, 'stopKubelet'>;
}

/**
 * STOP_KUBELET: stops and disables the kubelet over SSH, so it does not register the Node again
 * once it is deleted. A host without SSH access is recorded and passed. A host that does not
 * answer is waited for (the run names it as its blocker) until it answers, an operator skips the
 * host-side part (the node is then marked reinstall required), or the wait's deadline ends the
 * run before the Node is deleted; so does a kubelet that would not stop.
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
    const wait = await untilHostAnswers(
      ctx,
      this.ports,
      target.host,
      (signal) => this.ports.hostCommands.stopKubelet(target, signal),
      (result) => (result.outcome === 'UNREACHABLE' ? result.message : null),
    );
    switch (wait.outcome) {
      case 'INTERRUPTED':
        return wait;
      case 'EXPIRED':
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: wait.reason });
        return failed(wait.reason);
      case 'SKIPPED':
        await leaveHostAsItIs(ctx, this.ports, node, wait.skip);
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: message('removal.host.kubeletSkipped', { actor: wait.skip.actor }) });
        return NEXT;
      case 'ANSWERED':
        break;
    }
    const result = wait.value;
    switch (result.outcome) {
      case 'STOPPED':
        ctx.record({ kind: 'KUBELET_STOPPED', message: result.message });
        return NEXT;
      case 'NOT_INSTALLED':
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: result.message });
        return NEXT;
      case 'UNREACHABLE':
      case 'FAILED':
        ctx.record({ kind: 'KUBELET_NOT_STOPPED', message: result.message });
        return failed(message('removal.kubeletNotStopped', { error: bare(result.message) }));
    }
  }
}
