import { isUnauthenticated } from '@ccos/agent/data-access-api';
import type { JsonObject } from '@ccos/agent/util-host';
import type { AgentConfig } from '../agent-config';
import { failure, success, type StepContext, type StepHandler, type StepResult } from '../step-handler';
import { agentRunOnce, PREFLIGHT_CHECKS, type CheckResult, type PreflightCheck } from './preflight-checks';

/**
 * PREFLIGHT: runs every check (a failing one does not stop the others, so
 * the operator sees all problems at once), reports each as a PROGRESS
 * event, and fails naming every failing check with its hint.
 */
export class PreflightStep implements StepHandler {
  readonly step = 'PREFLIGHT' as const;

  constructor(private readonly checks: readonly PreflightCheck[] = PREFLIGHT_CHECKS) {}

  validate(config: AgentConfig): string[] {
    return config.requirements.maxClockSkewSeconds > 0 ? [] : ['requirements.maxClockSkewSeconds must be positive'];
  }

  async run(ctx: StepContext): Promise<StepResult> {
    const facts = agentRunOnce(ctx);
    const results: CheckResult[] = [];
    const problems: string[] = [];
    const hints: string[] = [];
    for (const [index, check] of this.checks.entries()) {
      if (ctx.signal.aborted) {
        break;
      }
      let outcome;
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
          hint: 'This is a bug in the agent; the diagnostics bundle has its log.',
          problem: `${check.name} could not be checked (${(error as Error).message})`,
        };
      }
      const result: CheckResult = { name: check.name, passed: outcome.passed, observed: outcome.observed, expected: outcome.expected, hint: outcome.hint };
      results.push(result);
      if (!outcome.passed) {
        problems.push(outcome.problem);
        if (!hints.includes(outcome.hint)) {
          hints.push(outcome.hint);
        }
      }
      await ctx.progress({
        message: `check ${index + 1}/${this.checks.length} ${check.name}: ${outcome.passed ? 'passed' : 'FAILED'} (${outcome.observed})`,
        progress: Math.round(((index + 1) / this.checks.length) * 100),
        detail: { check: result as unknown as JsonObject },
      });
    }
    const checks = results as unknown as JsonObject[];
    if (problems.length > 0) {
      return failure('PREFLIGHT_FAILED', `preflight failed: ${problems.join('; ')}`, hints.join(' '), {
        detail: { checks, failed: results.filter((r) => !r.passed).map((r) => r.name) },
      });
    }
    return success(`all ${results.length} preflight checks passed`, { checks });
  }
}
