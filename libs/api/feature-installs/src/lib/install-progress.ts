import type { InstallRunNoticeInput, InstallRunNotices } from '@ccos/api/data-access-db';
import { type EventBus, type InstallProgressPayload, TOPICS } from '@ccos/api/util-graphql';
import type { InstallStep, StepEventStatus } from '@ccos/shared/domain';

/**
 * The one publisher of a node's install progress (`TOPICS.INSTALL_PROGRESS`, what `installProgress`
 * subscribers and the batches hear): an agent's event stored, a run's state changed, a notice raised
 * on a run. Subscribers read what changed from the store; a payload only says where to look.
 */
export class InstallProgress {
  constructor(private readonly bus: EventBus) {}

  /** An agent's event was stored (not a duplicate). */
  eventStored(run: { readonly id: string; readonly nodeId: string }, event: { readonly seq: number; readonly step: InstallStep; readonly status: StepEventStatus }): void {
    this.publish({ nodeId: run.nodeId, runId: run.id, seq: event.seq, step: event.step, status: event.status, runStatus: null });
  }

  /** The run started, ended, stalled or had its diagnostics uploaded; `seq` is its last event's. */
  runChanged(run: { readonly id: string; readonly nodeId: string; readonly status: string }, seq = 0): void {
    this.publish({ nodeId: run.nodeId, runId: run.id, seq, step: null, status: null, runStatus: run.status });
  }

  /** The service raised a notice on the run. */
  noticeRaised(run: { readonly id: string; readonly nodeId: string }): void {
    this.publish({ nodeId: run.nodeId, runId: run.id, seq: 0, step: null, status: null, runStatus: null });
  }

  private publish(payload: InstallProgressPayload): void {
    this.bus.publish(TOPICS.INSTALL_PROGRESS, payload.nodeId, payload);
  }
}

/** A notice another feature raises on a node's install run (the CSR approver's denied impostor). */
export interface RunNotice extends InstallRunNoticeInput {
  readonly nodeId: string;
}

/** Where other features raise notices on install runs: stored on the run, then announced to its followers. */
export class RunNoticeBoard {
  constructor(
    private readonly notices: InstallRunNotices,
    private readonly progress: InstallProgress,
  ) {}

  async raise(notice: RunNotice): Promise<void> {
    const { nodeId, ...stored } = notice;
    await this.notices.raise(stored);
    this.progress.noticeRaised({ id: notice.runId, nodeId });
  }
}
