import { IsOptional, Max, MaxLength, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, GraphQLISODateTime, ID, InputType, Int, ObjectType } from 'type-graphql';
import { InstallStepEnum, MultiLine, Satisfies, StepEventStatusEnum, coded, MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
import type { InstallStep, Problem, StepEventStatus } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';

/**
 * The most a step event's `detail` may take, as JSON. The largest is APPLY_IGNITION's success: each
 * file Ignition wrote with its SHA-256 (about 250 bytes a file, so some 190 files); kept below
 * the 64 KiB an agent's whole request may take on the API's port (MAX_ANONYMOUS_REQUEST_BYTES).
 */
export const MAX_STEP_DETAIL_BYTES = 48 * 1024;

/**
 * PROGRESS events one run may store by default (INSTALL_RUN_MAX_EVENTS), and their bytes
 * (INSTALL_RUN_MAX_EVENT_BYTES: message, coded message and detail). A real install stores about
 * 50 events and 20 kB; one that waits its whole 2-hour deadline for a CSR approval adds a
 * heartbeat every 25 s (about 300). STARTED, SUCCEEDED and FAILED events have
 * {@link STEP_EVENT_RESERVE} events and {@link STEP_EVENT_RESERVE_BYTES} more, so a run can always finish.
 */
export const DEFAULT_RUN_EVENT_CAPS = { events: 2_000, bytes: 4 * 1024 * 1024 } as const;
export const STEP_EVENT_RESERVE = 50;
export const STEP_EVENT_RESERVE_BYTES = 1024 * 1024;

/** What an event weighs against its run's byte cap: its message, coded message parameters and detail, as stored. */
export function eventBytes(input: Pick<ReportStepInput, 'message' | 'messageCode' | 'messageParams' | 'detail'>): number {
  const json = (value: unknown): number => (value === null || value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8'));
  return Buffer.byteLength(input.message ?? '', 'utf8') + Buffer.byteLength(input.messageCode ?? '', 'utf8') + json(input.messageParams) + json(input.detail);
}

function checkDetailSize(detail: Record<string, unknown>): Problem {
  const bytes = Buffer.byteLength(JSON.stringify(detail), 'utf8');
  return bytes > MAX_STEP_DETAIL_BYTES ? message('validation.detailTooLarge', { bytes, max: MAX_STEP_DETAIL_BYTES }) : null;
}

/** One step event from the agent; (runId, seq) is stored once, so re-sending is safe. */
@InputType()
export class ReportStepInput {
  @Field(() => ID)
  runId!: string;

  @Field(() => Int, { description: 'Starts at 1 for the run and grows by 1 per event.' })
  @Min(1, coded('validation.atLeast', { min: 1 }))
  @Max(1_000_000, coded('validation.atMost', { max: 1_000_000 }))
  seq!: number;

  @Field(() => InstallStepEnum)
  step!: InstallStep;

  @Field(() => StepEventStatusEnum)
  status!: StepEventStatus;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(0, coded('validation.between', { min: 0, max: 100 }))
  @Max(100, coded('validation.between', { min: 0, max: 100 }))
  progress?: number | null;

  @Field(() => String, { nullable: true })
  @MultiLine()
  @IsOptional()
  @MaxLength(4096, coded('validation.tooLong', { max: 4096 }))
  message?: string | null;

  @Field(() => String, { nullable: true, description: 'The code of `message` in the message catalogue (libs/shared/messages); unknown codes are stored as plain text.' })
  @IsOptional()
  @MaxLength(128, coded('validation.tooLong', { max: 128 }))
  messageCode?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: `The parameters of messageCode; at most ${MAX_STEP_DETAIL_BYTES} bytes as JSON.` })
  @IsOptional()
  @Satisfies(checkDetailSize)
  messageParams?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: `At most ${MAX_STEP_DETAIL_BYTES} bytes as JSON.` })
  @IsOptional()
  @Satisfies(checkDetailSize)
  detail?: Record<string, unknown> | null;

  @Field(() => GraphQLISODateTime, { description: 'When it happened, by the agent\'s clock.' })
  occurredAt!: Date;
}

@ObjectType('ReportStepResult')
export class ReportStepResultType {
  @Field(() => Boolean)
  accepted!: boolean;

  @Field(() => Boolean, { description: 'This (runId, seq) was stored before; nothing changed.' })
  duplicate!: boolean;

  @Field(() => Boolean, { description: 'The operator cancelled the run: report FAILED and stop.' })
  cancelRequested!: boolean;
}

@ObjectType('ReportStepsResult')
export class ReportStepsResultType {
  @Field(() => Int, { description: 'Events of the batch the service now holds (each seq once): every one, or the request fails.' })
  accepted!: number;

  @Field(() => [Int], { description: 'The seqs of those that were stored before; nothing changed for them.' })
  duplicateSeqs!: number[];

  @Field(() => Boolean, { description: 'The operator cancelled the run: report FAILED and stop.' })
  cancelRequested!: boolean;
}

@ObjectType('AgentRun', { description: 'What the agent of a run needs to know from the service.' })
export class AgentRunType {
  @Field(() => ID)
  runId!: string;

  @Field(() => String)
  nodeName!: string;

  @Field(() => GraphQLISODateTime, { description: 'The service\'s clock, for the skew check.' })
  serverTime!: Date;

  @Field(() => String, { nullable: true, description: 'Set when another Node of the cluster already has this name.' })
  hostnameConflict!: string | null;

  @MessageCodeField('hostnameConflict')
  hostnameConflictCode!: string | null;

  @MessageParamsField('hostnameConflict')
  hostnameConflictParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'Set when another Node of the cluster already has this IP.' })
  ipConflict!: string | null;

  @MessageCodeField('ipConflict')
  ipConflictCode!: string | null;

  @MessageParamsField('ipConflict')
  ipConflictParams!: Record<string, unknown> | null;

  @Field(() => Boolean)
  nodeRegistered!: boolean;

  @Field(() => Boolean)
  nodeReady!: boolean;

  @Field(() => [String], { description: 'CSRs of this node waiting for approval.' })
  pendingCsrNames!: string[];

  @Field(() => Boolean)
  cancelRequested!: boolean;
}
