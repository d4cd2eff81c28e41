import type { Logger } from 'pino';
import type { InstallRunStore, NodeStore } from '@ccos/api/data-access-db';
import { message } from '@ccos/shared/messages';

/**
 * Marks a node STALLED when the agent of its running install has been silent for
 * `silenceSeconds` (the agent sends a heartbeat at least every 30 s). A later event
 * brings it back to INSTALLING. Safe with several replicas: the status change is a
 * compare-and-set, so only one of them makes it.
 */
export class StallWatchdog {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly runs: InstallRunStore,
    private readonly nodes: NodeStore,
    private readonly silenceSeconds: number,
    private readonly logger: Logger,
  ) {}

  start(intervalMs = Math.min(15_000, (this.silenceSeconds * 1000) / 3)): void {
    this.timer = setInterval(() => {
      this.check().catch((error: unknown) => this.logger.warn({ err: error }, 'stall check failed'));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  async check(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.silenceSeconds * 1000);
    const silent = await this.runs.silentSince(cutoff);
    for (const run of silent) {
      const since = run.lastEventAt ?? run.startedAt;
      const seconds = Math.round((now.getTime() - since.getTime()) / 1000);
      await this.nodes
        .transition(run.nodeId, 'AGENT_SILENT', message('node.agentSilent', { seconds, since: since.toISOString() }))
        .then(() => this.logger.warn({ runId: run.id, nodeId: run.nodeId, seconds }, 'install stalled'))
        .catch(() => undefined);
    }
    return silent.length;
  }
}
