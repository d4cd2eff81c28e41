import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { AgentChannel } from '@ccos/api/data-access-db';
import { InstallRunStatusEnum, InstallStepEnum, MessageCodeField, MessageParamsField, RunEventType, RunType, StepEventStatusEnum, StepStateEnum } from '@ccos/api/util-graphql';
import type { InstallRunPurpose, InstallRunStatus, InstallStep, StepEventStatus, StepState } from '@ccos/shared/domain';

export const AgentChannelEnum = { HTTPS: 'HTTPS', PLAIN_HTTP: 'PLAIN_HTTP' } as const satisfies Record<AgentChannel, AgentChannel>;
registerEnumType(AgentChannelEnum, {
  name: 'AgentChannel',
  description: 'How an install run\'s agent reaches the service.',
  valuesConfig: {
    HTTPS: { description: 'TLS, the service recognised by the pin the agent got over SSH; artifacts checked against the manifest sha256 from SSH.' },
    PLAIN_HTTP: { description: 'Plain HTTP, allowed by AGENT_PLAIN_HTTP=allow: the run\'s token and the service\'s answers cross the network unprotected (artifacts are still checked against the manifest sha256 from SSH).' },
  },
});

export const InstallRunPurposeEnum = { INSTALL: 'INSTALL', APPLY: 'APPLY' } as const satisfies Record<InstallRunPurpose, InstallRunPurpose>;
registerEnumType(InstallRunPurposeEnum, {
  name: 'InstallRunPurpose',
  description: 'Why a run\'s agent ran.',
  valuesConfig: {
    INSTALL: { description: 'The host became a node; the node\'s status followed the run.' },
    APPLY: { description: 'A rollout (UPGRADE, REAPPLY) re-ran some steps on the joined node; the node stayed JOINED.' },
  },
});

@ObjectType('InstallStepSummary', { description: 'One of the six steps, folded from its events.' })
export class StepSummaryType {
  @Field(() => InstallStepEnum)
  step!: InstallStep;

  @Field(() => StepStateEnum)
  status!: StepState;

  @Field(() => Int, { description: '0–100' })
  progress!: number;

  @Field(() => GraphQLISODateTime, { nullable: true })
  startedAt!: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => String, { nullable: true })
  message!: string | null;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('StepEvent', { implements: RunEventType, simpleResolvers: true, description: 'One event the agent reported, in order (seq).' })
export class StepEventType extends RunEventType {
  @Field(() => InstallStepEnum)
  step!: InstallStep;

  @Field(() => StepEventStatusEnum)
  status!: StepEventStatus;

  @Field(() => Int, { nullable: true })
  progress!: number | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Failing check or command, exit code, output tail, hint.' })
  override detail!: Record<string, unknown> | null;
}

@ObjectType('InstallDiagnostics', { description: 'The agent\'s diagnostics bundle of a failed run (tar.gz).' })
export class DiagnosticsType {
  @Field(() => Int)
  size!: number;

  @Field(() => GraphQLISODateTime)
  uploadedAt!: Date;

  @Field(() => String, { description: 'Download path (GET with the bearer token).' })
  url!: string;
}

@ObjectType('InstallRunNotice', { description: 'Something the service raised on a run (not an agent event), e.g. an impostor\'s certificate request; repeats are counted.' })
export class InstallRunNoticeType {
  @Field(() => String, { description: 'CSR_IMPOSTOR: a client CSR for this node filed by someone other than the run\'s bootstrap identity, denied.' })
  kind!: string;

  @Field(() => String, { description: 'Who or what it is about (the identity that filed the CSRs).' })
  subject!: string;

  @Field(() => String, { description: 'The latest occurrence.' })
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;

  @Field(() => Int)
  count!: number;

  @Field(() => GraphQLISODateTime)
  firstAt!: Date;

  @Field(() => GraphQLISODateTime)
  lastAt!: Date;
}

@ObjectType('PlaceInLine', { description: 'Where a run waiting for one of its cluster\'s install slots stands.' })
export class PlaceInLineType {
  @Field(() => Int, { description: '1: the next run of the cluster to start.' })
  position!: number;

  @Field(() => Int, { description: 'Runs of the cluster waiting, this one included.' })
  waiting!: number;

  @Field(() => Int, { description: 'The cluster\'s installsAtOnce.' })
  limit!: number;
}

@ObjectType('InstallRun', { implements: RunType })
export class InstallRunType extends RunType {
  @Field(() => InstallRunStatusEnum)
  status!: InstallRunStatus;

  @Field(() => InstallRunPurposeEnum)
  purpose!: InstallRunPurpose;

  @Field(() => InstallStepEnum, { description: 'PREFLIGHT for a first run; the first unfinished step for a retry; an apply run\'s first step.' })
  startStep!: InstallStep;

  @Field(() => [InstallStepEnum], { nullable: true, description: 'The steps an apply run ran, in order; null: every step from startStep on.' })
  onlySteps!: InstallStep[] | null;

  @Field(() => InstallStepEnum, { nullable: true })
  failedStep!: InstallStep | null;

  @Field(() => AgentChannelEnum, { description: 'PLAIN_HTTP is a warning: this run was not protected against the network.' })
  agentChannel!: AgentChannel;

  @Field(() => GraphQLISODateTime, { nullable: true })
  lastEventAt!: Date | null;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'When the run got one of its cluster\'s install slots and its agent\'s start was queued; null while it waits its turn (placeInLine).',
  })
  admittedAt!: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'A run still running then is ended; its agent token and bootstrap identity end with it. Null while the run waits for a slot: it counts from admittedAt.' })
  deadlineAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'The bootstrap identity minted for this run (its token went only to the host): the one requester whose client CSR for the node is auto-approved.' })
  bootstrapIdentity!: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When that identity was deleted from the cluster.' })
  bootstrapIdentityRevokedAt!: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When the run first refused an agent event for its caps on events or bytes (INSTALL_RUN_MAX_EVENTS, INSTALL_RUN_MAX_EVENT_BYTES): its log is incomplete from then on. Null while it never did.' })
  eventsCappedAt!: Date | null;

  @Field(() => [InstallRunNoticeType])
  notices!: InstallRunNoticeType[];

  @Field(() => [StepSummaryType])
  steps!: StepSummaryType[];

  @Field(() => [StepEventType])
  override events!: StepEventType[];

  @Field(() => DiagnosticsType, { nullable: true })
  diagnostics!: DiagnosticsType | null;
}

@ObjectType('InstallProgress', { description: 'The latest run as it is now, and the events this subscriber has not seen: all of them in the first message, then each new one.' })
export class InstallProgressType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => InstallRunType, { nullable: true, description: 'Null while the node has no run.' })
  run!: InstallRunType | null;

  @Field(() => [StepEventType])
  events!: StepEventType[];
}
