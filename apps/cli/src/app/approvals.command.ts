import { type ApprovalRequestFieldsFragment, ApprovalRequestsDocument, ApproveRequestDocument, RejectRequestDocument, SetClusterFourEyesDocument } from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, clusterListCommand, printJson, resolveCluster, stringFlag, usageError } from './command';
import { EXIT, type ExitCode } from './exit-codes';
import { serverText } from './messages';

/** `approvals list [--cluster C] [--pending]`: the cluster's held actions, newest first. */
export const APPROVALS_LIST: CommandSpec = clusterListCommand<ApprovalRequestFieldsFragment>({
  options: { pending: { type: 'boolean' } },
  fetch: async (context, clusterId) => (await context.api().request(ApprovalRequestsDocument, { clusterId, pendingOnly: context.flags['pending'] === true })).approvalRequests,
  columns: ['ID', 'ACTION', 'TARGET', 'REQUESTER', 'STATUS', 'EXPIRES', 'DECIDED BY', 'RESULT'],
  row: (request, context) => [request.id, request.action, request.target, request.requestedBy, request.status, request.expiresAt, request.decidedBy ?? '', outcomeText(context, request)],
});

/** `approvals approve REQUEST`: approves another user's held action, which then runs. */
export const APPROVALS_APPROVE: CommandSpec = {
  options: {},
  positionals: ['REQUEST'],
  async run(context) {
    const { approveRequest } = await context.api().request(ApproveRequestDocument, { id: context.positionals[0] ?? '' });
    return decided(context, approveRequest);
  },
};

/** `approvals reject REQUEST --reason TEXT`. */
export const APPROVALS_REJECT: CommandSpec = {
  options: { reason: { type: 'string' } },
  positionals: ['REQUEST'],
  async run(context) {
    const reason = stringFlag(context, 'reason');
    if (!reason) {
      throw usageError(context.t, context.t('approvalReasonMissing'));
    }
    const { rejectRequest } = await context.api().request(RejectRequestDocument, { id: context.positionals[0] ?? '', reason });
    return decided(context, rejectRequest);
  },
};

/** `clusters four-eyes on|off [--cluster C]`. */
export const CLUSTERS_FOUR_EYES: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: ['on|off'],
  async run(context) {
    const switched = context.positionals[0];
    if (switched !== 'on' && switched !== 'off') {
      throw usageError(context.t, context.t('fourEyesOnOrOff'));
    }
    const cluster = await resolveCluster(context);
    const { setClusterFourEyes } = await context.api().request(SetClusterFourEyesDocument, { clusterId: cluster.id, enabled: switched === 'on' });
    if (context.output !== 'table') {
      printJson(context, setClusterFourEyes);
    } else {
      context.io.out(context.t(setClusterFourEyes.fourEyes ? 'fourEyesOn' : 'fourEyesOff', { cluster: setClusterFourEyes.name }));
    }
    return EXIT.ok;
  },
};

function decided(context: CommandContext, request: ApprovalRequestFieldsFragment): ExitCode {
  if (context.output !== 'table') {
    printJson(context, request);
  } else {
    context.io.out(context.t('approvalDecided', { id: request.id, action: request.action, target: request.target, status: request.status, outcome: outcomeText(context, request) || request.decisionReason || '' }));
  }
  return request.status === 'FAILED' ? EXIT.failed : EXIT.ok;
}

function outcomeText(context: CommandContext, request: ApprovalRequestFieldsFragment): string {
  return request.outcome ? serverText(context.language, request.outcome, request.outcomeCode, request.outcomeParams) : '';
}
