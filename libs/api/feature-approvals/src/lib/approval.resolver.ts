import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { ApprovalRequestRecord } from '@ccos/api/data-access-db';
import { isUuid } from '@ccos/api/data-access-db';
import { type ApprovalsChangedPayload, NotFoundError, type RequestContext, TOPICS, UnauthenticatedError, startWith } from '@ccos/api/util-graphql';
import type { ApprovalService, Approver } from './approval.service';
import { ApprovalRequestType } from './approval.types';

@Resolver()
export class ApprovalResolver {
  constructor(private readonly approvals: ApprovalService) {}

  @Authorized('VIEWER')
  @Query(() => [ApprovalRequestType], { description: 'The cluster\'s approval requests, newest first (the latest 100); only those waiting with pendingOnly.' })
  async approvalRequests(@Arg('clusterId', () => ID) clusterId: string, @Arg('pendingOnly', () => Boolean, { defaultValue: false }) pendingOnly: boolean): Promise<ApprovalRequestType[]> {
    return (await this.approvals.list(clusterId, pendingOnly)).map(toRequestType);
  }

  @Authorized('VIEWER')
  @Query(() => ApprovalRequestType)
  async approvalRequest(@Arg('id', () => ID) id: string): Promise<ApprovalRequestType> {
    return toRequestType(await this.approvals.get(id));
  }

  @Authorized('VIEWER')
  @Subscription(() => [ApprovalRequestType], {
    description: 'The cluster\'s approval requests as approvalRequests lists them, now and again whenever one is made, decided or expires.',
    subscribe: ({ args, context }) => {
      const clusterId = String(args['clusterId']);
      // Refused here: the first message would look the id up in a uuid column.
      if (!isUuid(clusterId)) {
        throw new NotFoundError('cluster', clusterId);
      }
      const live = (context as RequestContext).events.subscribe(TOPICS.APPROVALS_CHANGED, clusterId) as AsyncIterable<Pick<ApprovalsChangedPayload, 'clusterId'>>;
      return startWith<Pick<ApprovalsChangedPayload, 'clusterId'>>(() => ({ clusterId }), live);
    },
  })
  async approvalRequestsChanged(@Root() message: Pick<ApprovalsChangedPayload, 'clusterId'>, @Arg('clusterId', () => ID) _clusterId: string): Promise<ApprovalRequestType[]> {
    return (await this.approvals.list(message.clusterId, false)).map(toRequestType);
  }

  @Authorized('OPERATOR')
  @Mutation(() => ApprovalRequestType, {
    description: 'Approves another user\'s held action and runs it (as its requester\'s, approved by you); your role must allow the action. Answers the request as it ended: APPROVED, or FAILED with why.',
  })
  async approveRequest(@Arg('id', () => ID) id: string, @Ctx() context: RequestContext): Promise<ApprovalRequestType> {
    return toRequestType(await this.approvals.approve(id, approverOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => ApprovalRequestType, { description: 'Rejects another user\'s held action with a written reason; nothing is run.' })
  async rejectRequest(@Arg('id', () => ID) id: string, @Arg('reason', () => String) reason: string, @Ctx() context: RequestContext): Promise<ApprovalRequestType> {
    return toRequestType(await this.approvals.reject(id, approverOf(context), reason));
  }
}

function approverOf(context: RequestContext): Approver {
  if (!context.user) {
    throw new UnauthenticatedError();
  }
  return { username: context.user.username, role: context.user.role };
}

function toRequestType(request: ApprovalRequestRecord): ApprovalRequestType {
  const { outcomeCoded, ...fields } = request;
  return { ...fields, outcomeCode: outcomeCoded?.code ?? null, outcomeParams: (outcomeCoded?.params as Record<string, unknown> | undefined) ?? null };
}
