import 'reflect-metadata';
import { IsOptional } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { type TaintEffect, checkLabelKey, checkLabelValue } from '@ccos/shared/domain';
import { Satisfies } from './validation';

/*
 * Node labels and taints as GraphQL types, shared by every feature that shows or takes them
 * (nodes, batches, node groups): one GraphQL type per concept.
 */

@ObjectType('Label', { simpleResolvers: true })
export class LabelType {
  @Field(() => String)
  key!: string;

  @Field(() => String)
  value!: string;
}

@ObjectType('Taint', { simpleResolvers: true })
export class TaintType {
  @Field(() => String)
  key!: string;

  @Field(() => String, { nullable: true })
  value!: string | null;

  @Field(() => String)
  effect!: TaintEffect;
}

@InputType()
export class LabelInput {
  @Field(() => String)
  @Satisfies(checkLabelKey)
  key!: string;

  @Field(() => String, { defaultValue: '' })
  @Satisfies(checkLabelValue)
  value!: string;
}

@InputType()
export class TaintInput {
  @Field(() => String)
  @Satisfies(checkLabelKey)
  key!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Satisfies(checkLabelValue)
  value?: string | null;

  @Field(() => String, { description: 'NoSchedule, PreferNoSchedule or NoExecute' })
  effect!: TaintEffect;
}

/** The description of every input's `roleLabelReason`, the reason a restricted node-role label needs. */
export const ROLE_LABEL_REASON_DESCRIPTION =
  'Why the node takes a role an OPERATOR may not give: any node-role.kubernetes.io/ role but worker and those in ALLOW_NODE_ROLES ' +
  '(master, control-plane, …). Such a label needs the ADMIN role and this reason (at most 500 characters), which the audit log keeps.';
