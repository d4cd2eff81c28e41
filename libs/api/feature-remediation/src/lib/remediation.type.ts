import { Field, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';
import { MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';

@ObjectType('RemediationPolicy', { simpleResolvers: true })
export class RemediationPolicyType {
  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Boolean)
  paused!: boolean;

  @Field(() => Int)
  unhealthySeconds!: number;

  @Field(() => Int)
  rungTimeoutSeconds!: number;

  @Field(() => Int)
  maxUnhealthy!: number;

  @Field(() => Boolean)
  maxUnhealthyIsPercent!: boolean;
}

@ObjectType('RemediationHold', { simpleResolvers: true, description: 'Remediation held by the cap: too many members unhealthy at once, so the cause is likely the network or the control plane.' })
export class RemediationHoldType {
  @Field(() => Int)
  unhealthy!: number;

  @Field(() => Int)
  members!: number;

  @Field(() => Int)
  cap!: number;

  @Field(() => GraphQLISODateTime)
  since!: Date;

  @Field(() => String, { description: '"remediation held: N of M unhealthy, cap K".' })
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('ClusterRemediation', { simpleResolvers: true })
export class ClusterRemediationType {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => RemediationPolicyType, { description: 'The policy; off (enabled false) until an ADMIN sets one.' })
  policy!: RemediationPolicyType;

  @Field(() => RemediationHoldType, { nullable: true, description: 'Set while the cap holds remediation.' })
  held!: RemediationHoldType | null;
}
