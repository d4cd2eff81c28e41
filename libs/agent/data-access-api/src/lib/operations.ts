import type { InstallStep, StepEventStatus } from '@ccos/shared/domain';
import type { JsonObject } from '@ccos/agent/util-host';

/**
 * The agent's GraphQL operations, exactly as agreed with the installer
 * service. Written here rather than generated: the agent ships as one
 * executable and needs no GraphQL library for three documents.
 */
export const REPORT_STEP = `mutation ReportStep($input: ReportStepInput!) {
  reportStep(input: $input) { accepted duplicate cancelRequested }
}`;

export const AGENT_RUN = `query AgentRun {
  agentRun { runId nodeName serverTime hostnameConflict ipConflict nodeRegistered nodeReady pendingCsrNames cancelRequested }
}`;

/** What a step handler says; the spool adds run id, sequence number and time. */
export interface StepEventInput {
  readonly step: InstallStep;
  readonly status: StepEventStatus;
  readonly progress?: number | null;
  readonly message?: string | null;
  readonly detail?: JsonObject | null;
}

/** `ReportStepInput` as sent. */
export interface StepEvent extends StepEventInput {
  readonly runId: string;
  readonly seq: number;
  /** ISO 8601 (DateTimeISO). */
  readonly occurredAt: string;
}

export interface ReportStepResult {
  readonly accepted: boolean;
  readonly duplicate: boolean;
  readonly cancelRequested: boolean;
}

export interface AgentRun {
  readonly runId: string;
  readonly nodeName: string;
  readonly serverTime: string;
  readonly hostnameConflict: string | null;
  readonly ipConflict: string | null;
  readonly nodeRegistered: boolean;
  readonly nodeReady: boolean;
  readonly pendingCsrNames: readonly string[];
  readonly cancelRequested: boolean;
}
