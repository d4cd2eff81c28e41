import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type ApprovalRequestRecord, type ApprovalStore, type ClusterStore, PeriodicQueueing } from '@ccos/api/data-access-db';
import { AppError, type ApprovalGate, type ApprovalsChangedPayload, type AskedAction, type AuditSink, BadUserInputError, type EventBus, ForbiddenError, NotFoundError, PreconditionError, TOPICS } from '@ccos/api/util-graphql';
import { APPROVAL_ROLE, type ApprovalAction, type Role, checkWrittenReason, roleAllows } from '@ccos/shared/domain';
import { type Message, bare, isMessageCode, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';

/** Runs an approved action. */
export interface ApprovalExecutor {
  /** Runs the action with the arguments it was asked with, as `actor`; what it did, in a few words. */
  run(params: Readonly<Record<string, unknown>>, actor: string): Promise<string>;
}

/** Why running it failed, in the reader's language when the error is one of the service's own. */
function causeOf(error: unknown): Message | string {
  if (error instanceof AppError && isMessageCode(error.extensions['messageCode'])) {
    return { code: error.extensions['messageCode'], params: (error.extensions['messageParams'] ?? {}) as Message['params'] };
  }
  return error instanceof Error ? error.message : String(error);
}

export interface Approver {
  readonly username: string;
  readonly role: Role;
}

export interface ApprovalServiceOptions {
  readonly store: ApprovalStore;
  readonly clusters: Pick<ClusterStore, 'get'>;
  readonly clock: Clock;
  /** How long a request waits for a decision (APPROVAL_TTL_SECONDS). */
  readonly ttlMs: number;
  readonly logger: Logger;
  /** Where the cluster's followers hear that its requests changed (the console's approvals card). */
  readonly events: Pick<EventBus, 'publish'>;
  /** Where an expiry is recorded (requests and decisions are mutations, audited as every one is). */
  readonly audit?: AuditSink;
  /** How often requests past their time are marked EXPIRED. Default 15 s. */
  readonly expiryCheckMs?: number;
}

/**
 * Four-eyes approval. On a cluster that requires it, an action that cannot be undone or that
 * passes a safety check is not run when asked: it is held as a request (with its preview) and the
 * caller is told so, naming the request. Another user whose role allows the action approves it
 * (it then runs, as its requester's, approved by them) or rejects it; nobody decides their own; a
 * request not decided in time expires and nothing is done.
 */
export class ApprovalService implements ApprovalGate {
  private readonly executors = new Map<ApprovalAction, ApprovalExecutor>();
  private readonly expiry: PeriodicQueueing;

  constructor(private readonly options: ApprovalServiceOptions) {
    this.expiry = new PeriodicQueueing(options.expiryCheckMs ?? 15_000, () => this.expireDue(), (error) => options.logger.warn({ err: error }, 'could not mark approval requests past their time expired'));
  }

  register(action: ApprovalAction, executor: ApprovalExecutor): void {
    this.executors.set(action, executor);
  }

  start(): void {
    this.expiry.start();
  }

  stop(): void {
    this.expiry.stop();
  }

  /**
   * Returns when the action may run now (its cluster does not require a second person); otherwise
   * holds it as a request and throws FAILED_PRECONDITION naming the request (`approvalRequestId`).
   */
  async gate(asked: AskedAction): Promise<void> {
    const cluster = await this.options.clusters.get(asked.clusterId);
    if (!cluster.fourEyes) {
      return;
    }
    // An action with nothing registered to run it is a wiring mistake, found before anything is held.
    this.executorOf(asked.action);
    const preview = asked.preview ? await asked.preview() : null;
    const request = await this.options.store.create({
      id: randomUUID(),
      clusterId: cluster.id,
      action: asked.action,
      target: asked.target,
      params: asked.params,
      preview,
      requestedBy: asked.actor,
      expiresAt: new Date(this.options.clock.now() + this.options.ttlMs),
    });
    this.changed(request);
    this.options.logger.info({ approvalRequestId: request.id, action: asked.action, target: asked.target, requestedBy: asked.actor }, 'an action waits for a second person\'s approval');
    throw new PreconditionError(
      message('approval.required', { action: bare(message(`approval.action.${asked.action}`)), target: asked.target, cluster: cluster.name, id: request.id, expiresAt: request.expiresAt.toISOString(), role: APPROVAL_ROLE[asked.action] }),
      { approvalRequestId: request.id, expiresAt: request.expiresAt.toISOString() },
    );
  }

  list(clusterId: string, pendingOnly: boolean, limit = 100): Promise<ApprovalRequestRecord[]> {
    return this.options.store.ofCluster(clusterId, pendingOnly, limit);
  }

  async get(id: string): Promise<ApprovalRequestRecord> {
    const request = await this.options.store.find(id);
    if (!request) {
      throw new NotFoundError('approval request', id);
    }
    return request;
  }

  /** Approves the request and runs its action as its requester's; the request as it ended (FAILED when running it failed). */
  async approve(id: string, approver: Approver): Promise<ApprovalRequestRecord> {
    const request = await this.get(id);
    const executor = this.executorOf(request.action);
    this.requireRole(request, approver);
    const approved = await this.decided(request, await this.options.store.decide(id, 'APPROVED', approver.username, null, new Date(this.options.clock.now())), approver);
    const actor = `${approved.requestedBy} (approved by ${approver.username})`;
    let ended: ApprovalRequestRecord | null;
    try {
      const outcome = message('approval.ran', { approver: approver.username, outcome: await executor.run(approved.params, actor) });
      ended = await this.options.store.recordOutcome(id, false, outcome.message, bare(outcome));
    } catch (error) {
      this.options.logger.warn({ err: error, approvalRequestId: id }, 'an approved action failed');
      const outcome = message('approval.runFailed', { approver: approver.username, error: causeOf(error) });
      ended = await this.options.store.recordOutcome(id, true, outcome.message, bare(outcome));
    }
    this.changed(ended ?? approved);
    return ended ?? approved;
  }

  /** Rejects the request with a written reason; nothing is run. */
  async reject(id: string, approver: Approver, reason: string): Promise<ApprovalRequestRecord> {
    const problem = checkWrittenReason(reason, message('approval.reasonRequired'));
    if (problem) {
      throw new BadUserInputError('reason', problem);
    }
    const request = await this.get(id);
    this.requireRole(request, approver);
    const rejected = await this.decided(request, await this.options.store.decide(id, 'REJECTED', approver.username, reason.trim(), new Date(this.options.clock.now())), approver);
    this.changed(rejected);
    return rejected;
  }

  /** Marks the pending requests past their time EXPIRED; how many. */
  async expireDue(): Promise<number> {
    const expired = await this.options.store.expire(new Date(this.options.clock.now()));
    for (const request of expired) {
      this.changed(request);
      await this.options.audit?.record({
        actor: 'system',
        action: 'approvalExpired',
        targetType: 'ApprovalRequest',
        targetId: request.id,
        result: 'SUCCESS',
        detail: { clusterId: request.clusterId, action: request.action, target: request.target, requestedBy: request.requestedBy, expiresAt: request.expiresAt.toISOString() },
        requestId: null,
      });
      this.options.logger.info({ approvalRequestId: request.id, action: request.action, target: request.target, requestedBy: request.requestedBy }, 'an approval request expired without a decision; nothing was done');
    }
    return expired.length;
  }

  /** The decided request, or why it could not be decided (read again: another decision or the expiry may have come first). */
  private async decided(asked: ApprovalRequestRecord, decided: ApprovalRequestRecord | null, approver: Approver): Promise<ApprovalRequestRecord> {
    if (decided) {
      return decided;
    }
    const now = await this.get(asked.id);
    if (now.requestedBy === approver.username) {
      throw new PreconditionError(message('approval.ownRequest', { id: now.id }), { status: now.status });
    }
    if (now.status === 'PENDING' || now.status === 'EXPIRED') {
      throw new PreconditionError(message('approval.expired', { id: now.id, expiresAt: now.expiresAt.toISOString() }), { status: 'EXPIRED' });
    }
    throw new PreconditionError(message('approval.notPending', { id: now.id, status: now.status }), { status: now.status });
  }

  private changed(request: Pick<ApprovalRequestRecord, 'id' | 'clusterId'>): void {
    const payload: ApprovalsChangedPayload = { clusterId: request.clusterId, requestId: request.id };
    this.options.events.publish(TOPICS.APPROVALS_CHANGED, request.clusterId, payload);
  }

  /** The approver's role must allow the action itself. */
  private requireRole(request: ApprovalRequestRecord, approver: Approver): void {
    const required = APPROVAL_ROLE[request.action as ApprovalAction] ?? 'ADMIN';
    if (!roleAllows(approver.role, required)) {
      throw new ForbiddenError(required, approver.role);
    }
  }

  private executorOf(action: string): ApprovalExecutor {
    const executor = this.executors.get(action as ApprovalAction);
    if (!executor) {
      throw new Error(`no executor for the approval action ${action}`);
    }
    return executor;
  }
}
