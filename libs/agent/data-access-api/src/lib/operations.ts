import type { JsonObject } from '@ccos/agent/util-host';
import { AgentRunText, type AgentRunQuery, ReportStepText, type ReportStepMutation, ReportStepsText, type ReportStepsMutation } from '@ccos/shared/api-schema';
import type { InstallStep, StepEventStatus } from '@ccos/shared/domain';

/**
 * The agent's GraphQL operations: libs/shared/api-schema/src/operations/agent.graphql, validated
 * against the schema and typed by GraphQL Code Generator (`npm run codegen`; a spec fails when they
 * drift). Sent as text: the agent ships as one executable and needs no GraphQL library.
 */
export const REPORT_STEP: string = ReportStepText.toString();
export const REPORT_STEPS: string = ReportStepsText.toString();
export const AGENT_RUN: string = AgentRunText.toString();

/** What a step handler says; the spool adds run id, sequence number and time. */
export interface StepEventInput {
  readonly step: InstallStep;
  readonly status: StepEventStatus;
  readonly progress?: number | null;
  readonly message?: string | null;
  /** The code of `message` in the message catalogue (libs/shared/messages), and its parameters. */
  readonly messageCode?: string | null;
  readonly messageParams?: JsonObject | null;
  readonly detail?: JsonObject | null;
}

/** `ReportStepInput` as sent. */
export interface StepEvent extends StepEventInput {
  readonly runId: string;
  readonly seq: number;
  /** ISO 8601 (DateTimeISO). */
  readonly occurredAt: string;
}

export type ReportStepResult = Readonly<ReportStepMutation['reportStep']>;

export type ReportStepsResult = Readonly<ReportStepsMutation['reportSteps']>;

export type AgentRun = Readonly<AgentRunQuery['agentRun']>;
