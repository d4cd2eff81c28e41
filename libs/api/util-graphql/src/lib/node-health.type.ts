import { Field, GraphQLISODateTime, ObjectType, registerEnumType } from 'type-graphql';
import { HEALTH_PROBLEMS, HEALTH_STATES, type HealthInputs, type HealthProblemKind, type HealthState, nodeHealth } from '@ccos/shared/domain';
import { enumOf } from './enums';
import { MessageCodeField, MessageParamsField, codedFields } from './message-code-fields';

export const HealthStateEnum = enumOf(HEALTH_STATES);
export const HealthProblemEnum = enumOf(HEALTH_PROBLEMS);
registerEnumType(HealthStateEnum, { name: 'HealthState', description: 'HEALTHY: Ready, and the host answered its last check with the kubelet active. UNKNOWN: the cluster has not shown its Node yet.' });
registerEnumType(HealthProblemEnum, {
  name: 'HealthProblemKind',
  description: 'NOT_READY: the kubelet reports the Node not Ready. READY_UNKNOWN: the kubelet stopped reporting. HOST_UNREACHABLE: SSH does not reach the host. KUBELET_INACTIVE: the kubelet unit is not active.',
});

@ObjectType('HealthProblem', { simpleResolvers: true })
export class HealthProblemType {
  @Field(() => HealthProblemEnum)
  kind!: HealthProblemKind;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Since when, as far as known.' })
  since!: Date | null;

  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('NodeHealth', { simpleResolvers: true, description: 'A member node\'s health, from its cluster (the Ready condition) and from its host (the last check over SSH).' })
export class NodeHealthType {
  @Field(() => HealthStateEnum)
  state!: HealthState;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When the state began, as far as known.' })
  since!: Date | null;

  @Field(() => [HealthProblemType])
  problems!: HealthProblemType[];

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When the host was last checked over SSH (HEALTH_CHECK_INTERVAL_SECONDS).' })
  hostCheckedAt!: Date | null;
}

/** The node's health as the API shows it; null for a node that is not a member of its cluster. */
export function toNodeHealthType(node: HealthInputs): NodeHealthType | null {
  const health = nodeHealth(node);
  if (!health) {
    return null;
  }
  return {
    state: health.state,
    since: health.since,
    problems: health.problems.map((problem) => ({ kind: problem.kind, since: problem.since, message: problem.text.message, ...codedFields('message', problem.text) })),
    hostCheckedAt: node.host ? new Date(node.host.checkedAt) : null,
  };
}
