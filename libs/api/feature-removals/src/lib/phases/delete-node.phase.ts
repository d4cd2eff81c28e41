import { deleteNode } from '@ccos/api/data-access-kube';
import { message } from '@ccos/shared/messages';
import type { ClusterAccess } from '../removal-ports';
import { errorText, failed, NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

export interface DeleteNodePorts {
  readonly clusters: Pick<ClusterAccess, 'watch'>;
}

/**
 * DELETE_NODE: deletes the Node object, only the one the run started with (its uid); one already
 * gone counts as deleted. Reached only after a finished drain and a stopped (or unreachable) kubelet.
 */
export class DeleteNodePhase implements RemovalPhaseHandler {
  readonly phase = 'DELETE_NODE' as const;

  constructor(private readonly ports: DeleteNodePorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const { run } = ctx;
    try {
      const { client } = await this.ports.clusters.watch(run.clusterId);
      const result = await deleteNode(client, run.nodeName, { uid: run.nodeUid ?? undefined });
      if (result.ok) {
        ctx.record({ kind: 'NODE_DELETED', message: message(result.existed ? 'removal.event.nodeDeleted' : 'removal.event.nodeAlreadyGone', { node: run.nodeName }) });
        return NEXT;
      }
      ctx.record({ kind: 'NODE_NOT_DELETED', message: result.reason });
      return failed(result.reason);
    } catch (error) {
      const reason = message('removal.nodeNotDeleted', { error: errorText(error) });
      ctx.record({ kind: 'NODE_NOT_DELETED', message: reason });
      return failed(reason);
    }
  }
}
