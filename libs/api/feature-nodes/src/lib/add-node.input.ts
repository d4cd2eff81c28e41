import { IsOptional, MaxLength, ValidateNested } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { checkHostname, checkIp, checkPort, checkSshUser } from '@ccos/shared/domain';
import { LabelInput, MultiLine, Satisfies, Secret, TaintInput } from '@ccos/api/util-graphql';

export { LabelInput, TaintInput };

/** SSH credentials: a password, or a private key with an optional passphrase. Write-only. */
@InputType()
export class SshCredentialsInput {
  @Field(() => String, { defaultValue: 'root' })
  @Satisfies(checkSshUser)
  sshUser!: string;

  @Field(() => String, { nullable: true })
  @Secret()
  @IsOptional()
  @MaxLength(1024, { message: 'is longer than 1024 characters' })
  password?: string | null;

  @Field(() => String, { nullable: true, description: 'PEM or OpenSSH private key.' })
  @Secret()
  @MultiLine()
  @IsOptional()
  @MaxLength(32 * 1024, { message: 'is larger than 32 KiB' })
  privateKey?: string | null;

  @Field(() => String, { nullable: true })
  @Secret()
  @IsOptional()
  @MaxLength(1024, { message: 'is longer than 1024 characters' })
  passphrase?: string | null;
}

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
