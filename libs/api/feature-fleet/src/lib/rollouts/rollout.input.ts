import { ArrayMaxSize, IsInt, IsOptional, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { LabelInput, coded } from '@ccos/api/util-graphql';
import type { RolloutKind } from '@ccos/shared/domain';
import { RolloutKindEnum } from './rollout.type';

const MAX_NODES = 5000;

@InputType('MaintenanceWindowInput', { description: 'New nodes start only from each time cron fires (minute hour day-of-month month day-of-week, in timeZone) for durationMinutes; nodes already started finish.' })
export class MaintenanceWindowInput {
  @Field(() => String, { description: 'A five-field cron expression, e.g. "0 2 * * 6" (Saturdays at 02:00).' })
  @MaxLength(100, coded('validation.tooLong', { max: 100 }))
  cron!: string;

  @Field(() => Int, { description: 'How long the window stays open (1–10080 minutes).' })
  durationMinutes!: number;

  @Field(() => String, { defaultValue: 'UTC', description: 'An IANA time zone, e.g. Asia/Shanghai.' })
  @MaxLength(64, coded('validation.tooLong', { max: 64 }))
  timeZone!: string;
}

@InputType('StartRolloutInput')
export class StartRolloutInput {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => RolloutKindEnum)
  kind!: RolloutKind;

  @Field(() => [ID], { nullable: true, description: 'These nodes, in this order; without it, every joined node of the cluster the service installed (with labels: those carrying them all), by name.' })
  @IsOptional()
  @ArrayMaxSize(MAX_NODES, coded('validation.atMost', { max: MAX_NODES }))
  nodeIds?: string[] | null;

  @Field(() => [LabelInput], { defaultValue: [], description: 'Only nodes whose labels (as given here) include all of these; ignored with nodeIds.' })
  @ValidateNested({ each: true })
  @ArrayMaxSize(20, coded('validation.atMost', { max: 20 }))
  labels!: LabelInput[];

  @Field(() => Int, { defaultValue: 1, description: 'At most this many of the rollout\'s nodes unavailable at once (cordoned, draining, rebooting or NotReady for any reason): a count, or a percentage with maxUnavailableIsPercent.' })
  @IsInt(coded('validation.integer'))
  @Min(1, coded('validation.between', { min: 1, max: MAX_NODES }))
  @Max(MAX_NODES, coded('validation.between', { min: 1, max: MAX_NODES }))
  maxUnavailable!: number;

  @Field(() => Boolean, { defaultValue: false })
  maxUnavailableIsPercent!: boolean;

  @Field(() => MaintenanceWindowInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  window?: MaintenanceWindowInput | null;

  @Field(() => [String], { defaultValue: [], description: 'Alert names: while Alertmanager (ALERTMANAGER_URL) says one of them fires, no new node starts and the rollout pauses, naming it; nodes already started finish.' })
  @ArrayMaxSize(20, coded('validation.atMost', { max: 20 }))
  @MaxLength(200, { each: true, ...coded('validation.tooLong', { max: 200 }) })
  pauseOnAlerts!: string[];

  @Field(() => Int, { defaultValue: 3600, description: 'How long one node\'s drain may take before the rollout pauses on it (30–86400 s).' })
  @IsInt(coded('validation.integer'))
  @Min(30, coded('validation.between', { min: 30, max: 86_400 }))
  @Max(86_400, coded('validation.between', { min: 30, max: 86_400 }))
  drainTimeoutSeconds!: number;

  @Field(() => Int, { defaultValue: 900, description: 'How long a rebooted node has to come back (new boot, kubelet active, Node Ready) before the rollout pauses on it (30–86400 s).' })
  @IsInt(coded('validation.integer'))
  @Min(30, coded('validation.between', { min: 30, max: 86_400 }))
  @Max(86_400, coded('validation.between', { min: 30, max: 86_400 }))
  readyTimeoutSeconds!: number;
}
