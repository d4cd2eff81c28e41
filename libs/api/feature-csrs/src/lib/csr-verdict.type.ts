import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ObjectType } from 'type-graphql';
import type { CsrPolicyDecision, CsrPolicyPath, KubeletCsrKind } from '@ccos/shared/domain';
import { CsrPolicyDecisionEnum, CsrPolicyPathEnum, KubeletCsrKindEnum } from './csr.enums';

@ObjectType('CsrCheck', { description: 'One check of the auto-approve policy and what it found.' })
export class CsrCheckType {
  @Field(() => String, { description: 'A stable identifier, e.g. subject-organization or san-ip.' })
  name!: string;

  @Field(() => Boolean)
  passed!: boolean;

  @Field(() => String)
  detail!: string;

  @Field(() => String, { nullable: true, description: 'The message code of detail (libs/shared/messages), for clients that show it in their language.' })
  detailCode!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The parameters of detailCode.' })
  detailParams!: Record<string, unknown> | null;

  @Field(() => Boolean, { description: 'Whether an ADMIN\'s forced approval may go past this check when it fails. Signer, usages, subject, key, signature and SAN form never; the requester never for a host this service installs.' })
  overridable!: boolean;
}

@ObjectType('CsrVerdict', { description: 'What the auto-approve policy would do with a CSR, with every check it made.' })
export class CsrVerdictType {
  @Field(() => String)
  csrName!: string;

  @Field(() => CsrPolicyDecisionEnum)
  decision!: CsrPolicyDecision;

  @Field(() => KubeletCsrKindEnum, { nullable: true, description: 'Null for a signer that is not a kubelet signer.' })
  kind!: KubeletCsrKind | null;

  @Field(() => CsrPolicyPathEnum, { description: 'JOIN (a node being installed) or RENEWAL (a serving certificate of a node joined here): whose checks are listed, and which auto-approve switch applies.' })
  path!: CsrPolicyPath;

  @Field(() => String, { nullable: true, description: 'The inventory node the CSR is for.' })
  node!: string | null;

  @Field(() => String, { description: 'The first failed check, or why it is approved or superseded.' })
  reason!: string;

  @Field(() => String, { nullable: true, description: 'The message code of reason (libs/shared/messages), for clients that show it in their language.' })
  reasonCode!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The parameters of reasonCode.' })
  reasonParams!: Record<string, unknown> | null;

  @Field(() => [CsrCheckType])
  checks!: CsrCheckType[];
}
