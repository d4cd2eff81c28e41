import type { Logger } from 'pino';
import type { InstallRunStore, NodeStore } from '@ccos/api/data-access-db';
import { SERVICE_FAILURE_CODES } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import type { InstallService } from './install.service';
import type { RunBootstrapIdentities } from './run-bootstrap-identities';

/**
 * Ends what must not outlive an install run: a run still RUNNING at its deadline is ended as
 * FAILED (stalled or not; its agent token ends with the deadline anyway), and the bootstrap
 * identity of every run that ended is revoked — also for runs that ended while the service was
 * down or the cluster did not answer; and runs waiting for an install slot get the slots free
 * (should the admission when a run ended have failed). Runs once at start and then every `intervalMs`. Safe with
 * several replicas: ending a run is a compare-and-set on its status, deleting an account twice is
 * no error.
 */
export class InstallRunSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly runs: InstallRunStore,
    private readonly nodes: NodeStore,
    private readonly installs: InstallService,
    private readonly identities: RunBootstrapIdentities,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async start(intervalMs = 15_000): Promise<void> {
    await this.sweep();
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    await this.running;
  }

  /** One pass; resolves when it is done (a pass already under way is waited for, not doubled). */
  sweep(): Promise<void> {
    this.running = this.running.then(() => this.once()).catch((error: unknown) => this.logger.warn({ err: error }, 'install run sweep failed'));
    return this.running;
  }

  private async once(): Promise<void> {
    const now = this.now();
    const overdue = await this.runs.overdue(now);
    for (const run of overdue) {
      const deadline = run.deadlineAt?.toISOString() ?? 'unknown';
      const reason = message('install.deadlinePassed', { deadline });
      const finished = await this.installs.finish(run, 'FAILED', null, reason, SERVICE_FAILURE_CODES.deadline);
      if (finished.status !== 'FAILED' || finished.reason !== reason.message) {
        continue;
      }
      this.logger.warn({ runId: run.id, nodeId: run.nodeId, deadline }, 'install run passed its deadline');
      const node = await this.nodes.get(run.nodeId).catch(() => null);
      if (node && (node.status === 'INSTALLING' || node.status === 'STALLED')) {
        await this.nodes.transition(node.id, 'INSTALL_FAILED', reason).catch(() => undefined);
      }
      if (node) {
        await this.installs.stopAgent(node, run).catch((error: unknown) => this.logger.info({ err: error, runId: run.id }, 'could not queue the stop of the agent of an overdue run'));
      }
    }
    const admitted = await this.installs.admitAllWaiting();
    if (admitted > 0) {
      this.logger.info({ admitted }, 'started install runs that were waiting for a slot');
    }
    const revoked = await this.identities.revokeEnded();
    if (revoked > 0) {
      this.logger.info({ revoked }, 'revoked the bootstrap identities of ended install runs');
    }
  }
}
