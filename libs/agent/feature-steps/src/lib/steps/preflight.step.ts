import { isUnauthenticated } from '@ccos/agent/data-access-api';
import type { JsonObject } from '@ccos/agent/util-host';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import type { AgentConfig } from '../agent-config';
import { failure, progressOf, success, type StepContext, type StepHandler, type StepResult } from '../step-handler';
import { agentRunOnce, PREFLIGHT_CHECKS, type CheckOutcome, type CheckResult, type PreflightCheck } from './preflight-checks';

/**
 * PREFLIGHT: runs every check (a failing one does not stop the others, so
 * the operator sees all problems at once), reports each as a PROGRESS
 * event, and fails naming every failing check with its hint.
 */
export class PreflightStep implements StepHandler {
  readonly step = 'PREFLIGHT' as const;

  constructor(private readonly checks: readonly PreflightCheck[] = PREFLIGHT_CHECKS) {}

  validate(config: AgentConfig): CodedText[] {
    return config.requirements.maxClockSkewSeconds > 0 ? [] : [message('agent.preflight.skewLimitNotPositive')];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const facts = agentRunOnce(ctx);
    const results: CheckResult[] = [];
    const problems: CodedText[] = [];
    const hints: CodedText[] = [];
    for (const [index, check] of this.checks.entries()) {
      if (ctx.signal.aborted) {
        break;
      }
      let outcome: CheckOutcome;
      try {
        outcome = await check.run(ctx, facts);
      } catch (error) {
        if (isUnauthenticated(error)) {
          throw error;
        }
        outcome = {
          passed: false,
          observed: `check crashed: ${(error as Error).message}`,
          expected: 'the check runs',
          hint: message('agent.preflight.crashed.hint'),
          problem: message('agent.preflight.crashed', { check: check.name, error: (error as Error).message }),
        };
      }
      const result: CheckResult = {
        name: check.name, passed: outcome.passed, observed: outcome.observed, expected: outcome.expected, hint: outcome.hint.message, hintCode: outcome.hint.code, hintParams: outcome.hint.params,
      };
      results.push(result);
      if (!outcome.passed && outcome.problem) {
        problems.push(outcome.problem);
        if (!hints.some((hint) => hint.message === outcome.hint.message)) {
          hints.push(outcome.hint);
        }
      }
      await ctx.progress({
        ...progressOf(message('agent.preflight.check', { index: index + 1, total: this.checks.length, check: check.name, passed: outcome.passed, observed: outcome.observed })),
        progress: Math.round(((index + 1) / this.checks.length) * 100),
        detail: { check: result as unknown as JsonObject },
      });
    }
    const checks = results as unknown as JsonObject[];
    if (problems.length > 0) {
      const hint: CodedText = hints.length === 1 ? hints[0] : message('agent.hints', { hints: hints.map(bare) });
      return failure('PREFLIGHT_FAILED', message('agent.preflight.failed', { problems: problems.map(bare) }), hint, {
        detail: { checks, failed: results.filter((r) => !r.passed).map((r) => r.name) },
      });
    }
    return success(message('agent.preflight.passed', { count: results.length }), { checks });
  }
}
