import { Field, GraphQLISODateTime, ObjectType } from 'type-graphql';
import type { CsrDecisionKind } from '@ccos/api/data-access-db';
import { MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
import { CsrCheckType } from './csr-verdict.type';
import { CsrDecisionKindEnum } from './csr.enums';

@ObjectType('CsrDecision', { description: 'A decision recorded in csr_decisions: who, what, why, and the checks at that moment.' })
export class CsrDecisionType {
  @Field(() => CsrDecisionKindEnum)
  decision!: CsrDecisionKind;

  @Field(() => String, { description: 'A user name, or auto-approver.' })
  actor!: string;

  @Field(() => String)
  reason!: string;

  @MessageCodeField('reason', '; null for an operator\'s own words and decisions from before codes')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => Boolean, { description: 'An ADMIN approved although the policy would not have.' })
  forced!: boolean;

  @Field(() => String, { nullable: true, description: 'The reason the ADMIN wrote for a forced approval.' })
  forceReason!: string | null;

  @Field(() => [CsrCheckType])
  checks!: CsrCheckType[];

  @Field(() => GraphQLISODateTime)
  decidedAt!: Date;
}
