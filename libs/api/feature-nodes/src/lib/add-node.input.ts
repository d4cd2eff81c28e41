import { IsOptional, ValidateNested } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { HostAccessInput, LabelInput, ROLE_LABEL_REASON_DESCRIPTION, SshCredentialsInput, TaintInput } from '@ccos/api/util-graphql';

export { LabelInput, SshCredentialsInput, TaintInput };

@InputType({ description: 'A freshly installed host to become a worker (the seed\'s 录入节点).' })
export class AddNodeInput extends HostAccessInput {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => [LabelInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  labels!: LabelInput[];

  @Field(() => [TaintInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  taints!: TaintInput[];

  @Field(() => String, { nullable: true, description: ROLE_LABEL_REASON_DESCRIPTION })
  @IsOptional()
  roleLabelReason?: string | null;

  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'ADMIN only. Re-add a name this cluster removed after it had joined, within the longest lifetime of a kubelet certificate (a year): ' +
      'the removed machine may still hold valid certificates issued for that name, which removal cannot revoke (Kubernetes has no ' +
      'certificate revocation), so only an ADMIN who knows that machine is wiped or gone may re-add it. Without it the request is refused.',
  })
  acknowledgeOldCertificates!: boolean;
}
