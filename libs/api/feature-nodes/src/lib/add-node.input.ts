import { ValidateNested } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { LabelInput, Satisfies, SshCredentialsInput, TaintInput } from '@ccos/api/util-graphql';
import { checkHostname, checkIp, checkPort } from '@ccos/shared/domain';

export { LabelInput, SshCredentialsInput, TaintInput };

@InputType({ description: 'A freshly installed host to become a worker (the seed\'s 录入节点).' })
export class AddNodeInput extends SshCredentialsInput {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { description: 'The node name: an RFC 1123 host name, lower case.' })
  @Satisfies(checkHostname)
  hostname!: string;

  @Field(() => String)
  @Satisfies(checkIp)
  ip!: string;

  @Field(() => Int, { defaultValue: 22 })
  @Satisfies(checkPort)
  sshPort!: number;

  @Field(() => [LabelInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  labels!: LabelInput[];

  @Field(() => [TaintInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  taints!: TaintInput[];
}
