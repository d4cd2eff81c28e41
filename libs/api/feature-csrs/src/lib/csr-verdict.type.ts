import { Field, ObjectType } from 'type-graphql';
import { MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
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

  @MessageCodeField('detail')
  detailCode!: string | null;

  @MessageParamsField('detail')
  detailParams!: Record<string, unknown> | null;

  @Field(() => Boolean, { description: 'Whether an ADMIN\'s forced approval may go past this check when it fails: only inventory and time-window checks. Signer, usages, subject, key, signature and SAN form never; a serving CSR\'s requester, DNS names and cluster addresses never; a client CSR\'s requester never for a host this service installs.' })
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

  @MessageCodeField('reason')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => [CsrCheckType])
  checks!: CsrCheckType[];
}
