import { IsInt, Max, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { coded } from '@ccos/api/util-graphql';

@InputType('RemediationPolicyInput', { description: 'A cluster\'s remediation policy: after a member has been unhealthy for unhealthySeconds, restart its kubelet, then reboot it, each rung given rungTimeoutSeconds; nothing while more than maxUnhealthy members are unhealthy.' })
export class RemediationPolicyInput {
  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Boolean, { defaultValue: false, description: 'Hold the ladder (nothing new starts) until resumed.' })
  paused!: boolean;

  @Field(() => Int, { description: 'Seconds a member must be unhealthy before the first rung (5–86400).' })
  @IsInt(coded('validation.integer'))
  @Min(5, coded('validation.between', { min: 5, max: 86_400 }))
  @Max(86_400, coded('validation.between', { min: 5, max: 86_400 }))
  unhealthySeconds!: number;

  @Field(() => Int, { defaultValue: 300, description: 'Seconds each rung has to bring the member back before the next (10–86400).' })
  @IsInt(coded('validation.integer'))
  @Min(10, coded('validation.between', { min: 10, max: 86_400 }))
  @Max(86_400, coded('validation.between', { min: 10, max: 86_400 }))
  rungTimeoutSeconds!: number;

  @Field(() => Int, { description: 'Above this many unhealthy members (those under remediation counted) nothing is remediated: a count, or a percentage with maxUnhealthyIsPercent (0–100).' })
  @IsInt(coded('validation.integer'))
  @Min(0, coded('validation.between', { min: 0, max: 10_000 }))
  @Max(10_000, coded('validation.between', { min: 0, max: 10_000 }))
  maxUnhealthy!: number;

  @Field(() => Boolean, { defaultValue: false })
  maxUnhealthyIsPercent!: boolean;
}
