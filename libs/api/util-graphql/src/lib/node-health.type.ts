import { Field, GraphQLISODateTime, ObjectType, registerEnumType } from 'type-graphql';
import { HEALTH_PROBLEMS, HEALTH_STATES, type HealthInputs, type HealthProblemKind, type HealthState, type NodeRemediation, REMEDIATION_RUNGS, type RemediationRung, nodeHealth } from '@ccos/shared/domain';
import { enumOf } from './enums';
import { MessageCodeField, MessageParamsField, codedFields } from './message-code-fields';

export const HealthStateEnum = enumOf(HEALTH_STATES);
export const HealthProblemEnum = enumOf(HEALTH_PROBLEMS);
export const RemediationRungEnum = enumOf(REMEDIATION_RUNGS);
registerEnumType(RemediationRungEnum, { name: 'RemediationRung', description: 'RESTART_KUBELET (systemctl restart kubelet over SSH), then REBOOT (systemctl reboot).' });
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

@ObjectType('NodeRemediation', { simpleResolvers: true, description: 'A member\'s remediation in progress (the cluster\'s policy, clusterRemediation).' })
export class NodeRemediationType {
  @Field(() => RemediationRungEnum, { description: 'The rung it is at.' })
  rung!: RemediationRung;

  @Field(() => [RemediationRungEnum], { description: 'Every rung tried, in order.' })
  rungs!: RemediationRung[];

  @Field(() => GraphQLISODateTime)
  startedAt!: Date;

  @Field(() => GraphQLISODateTime, { description: 'Past it, a member still unhealthy goes to the next rung.' })
  deadline!: Date;

  @Field(() => Boolean, { description: 'Every rung was tried and it is still unhealthy: an operator has to look.' })
  exhausted!: boolean;
}

export function toNodeRemediationType(remediation: NodeRemediation | null): NodeRemediationType | null {
  return remediation
    ? { rung: remediation.rung, rungs: [...remediation.rungs], startedAt: new Date(remediation.startedAt), deadline: new Date(remediation.deadline), exhausted: remediation.exhausted }
    : null;
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
    hostCheckedAt: node.hostHealth ? new Date(node.hostHealth.checkedAt) : null,
  };
}
