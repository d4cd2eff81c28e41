import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '@ccos/api/util-graphql';
import type { AgentReportService } from './agent-report.service';
import { AgentRunType, ReportStepInput, ReportStepResultType } from './report-step.input';

/** The agent's API; it authenticates with its one-run token, not a user session. */
@Resolver()
export class AgentResolver {
  constructor(private readonly reports: AgentReportService) {}

  @Mutation(() => ReportStepResultType, { description: 'Agent only: one step event of its run.' })
  reportStep(@Arg('input', () => ReportStepInput) input: ReportStepInput, @Ctx() context: RequestContext): Promise<ReportStepResultType> {
    return this.reports.report(context.agentToken, input);
  }

  @Query(() => AgentRunType, { description: 'Agent only: what it needs to know about its run.' })
  agentRun(@Ctx() context: RequestContext): Promise<AgentRunType> {
    return this.reports.agentRun(context.agentToken);
  }
}
