import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '@ccos/api/util-graphql';
import { scrubSecrets, scrubSecretsDeep } from '@ccos/shared/util-redaction';
import type { AgentReportService } from './agent-report.service';
import { AgentRunType, ReportStepInput, ReportStepResultType, ReportStepsResultType } from './report-step.input';

/** The agent's API; it authenticates with its one-run token, not a user session. */
@Resolver()
export class AgentResolver {
  constructor(private readonly reports: AgentReportService) {}

  @Mutation(() => ReportStepResultType, { description: 'Agent only: one step event of its run.' })
  reportStep(@Arg('input', () => ReportStepInput) input: ReportStepInput, @Ctx() context: RequestContext): Promise<ReportStepResultType> {
    return this.reports.report(context.agentToken, scrubbed(input));
  }

  @Mutation(() => ReportStepsResultType, { description: 'Agent only: several step events of its run at once, in any order; each seq is stored once.' })
  reportSteps(@Arg('inputs', () => [ReportStepInput]) inputs: ReportStepInput[], @Ctx() context: RequestContext): Promise<ReportStepsResultType> {
    return this.reports.reportBatch(context.agentToken, inputs.map(scrubbed));
  }

  @Query(() => AgentRunType, { description: 'Agent only: what it needs to know about its run.' })
  agentRun(@Ctx() context: RequestContext): Promise<AgentRunType> {
    return this.reports.agentRun(context.agentToken);
  }
}

/**
 * The event's text quotes what the host saw (command output, a server's answer): it is scrubbed
 * of tokens and keys before it is stored and shown to VIEWERs, whatever the agent's version.
 */
function scrubbed(input: ReportStepInput): ReportStepInput {
  return {
    ...input,
    message: input.message == null ? input.message : scrubSecrets(input.message),
    detail: input.detail == null ? input.detail : scrubSecretsDeep(input.detail),
  };
}
