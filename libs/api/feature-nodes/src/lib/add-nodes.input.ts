import { IsOptional, MaxLength, ValidateNested } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { MultiLine, ROLE_LABEL_REASON_DESCRIPTION, SshSecretsInput, coded } from '@ccos/api/util-graphql';
import { LabelInput, SshCredentialsInput, TaintInput } from './add-node.input';

@InputType({ description: 'An address range with a hostname pattern: 198.18.0.10-198.18.0.29 with w-{n} gives w-1 … w-20.' })
export class AddressRangeInput {
  @Field(() => String, { description: '`198.18.0.10-198.18.0.29`, or `198.18.0.10-29`.' })
  @MaxLength(64, coded('validation.tooLong', { max: 64 }))
  range!: string;

  @Field(() => String, { description: '{n} is the number of the address (from firstNumber), {octet} its last octet, {ip} the address with dashes.' })
  @MaxLength(200, coded('validation.tooLong', { max: 200 }))
  hostnamePattern!: string;

  @Field(() => Int, { defaultValue: 1 })
  firstNumber!: number;
}

@InputType({ description: 'One host of a bulk add, with its own credentials if it does not use the shared ones.' })
export class BulkHostInput extends SshSecretsInput {
  @Field(() => String)
  @MaxLength(253, coded('validation.tooLong', { max: 253 }))
  hostname!: string;

  @Field(() => String)
  @MaxLength(64, coded('validation.tooLong', { max: 64 }))
  ip!: string;

  @Field(() => Int, { nullable: true })
  sshPort?: number | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(64, coded('validation.tooLong', { max: 64 }))
  sshUser?: string | null;

  @Field(() => [LabelInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  labels!: LabelInput[];

  @Field(() => [TaintInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  taints!: TaintInput[];
}

@InputType({
  description:
    'Many hosts at once: a list (CSV or lines: hostname, ip, port, user, labels, taints), an address range with a hostname pattern, or rows. ' +
    'The shared credentials (sshUser, password or privateKey) apply to every host without its own. Every row is checked before anything is stored.',
})
export class AddNodesInput extends SshCredentialsInput {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { nullable: true, description: 'CSV (optional header naming the columns) or one host per line; `#` starts a comment.' })
  @MultiLine()
  @IsOptional()
  @MaxLength(256 * 1024, coded('validation.tooLarge', { kib: 256 }))
  list?: string | null;

  @Field(() => AddressRangeInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  range?: AddressRangeInput | null;

  @Field(() => [BulkHostInput], { nullable: true })
  @IsOptional()
  @ValidateNested({ each: true })
  rows?: BulkHostInput[] | null;

  @Field(() => Int, { defaultValue: 22, description: 'The SSH port of rows that do not name one.' })
  sshPort!: number;

  @Field(() => [LabelInput], { defaultValue: [], description: 'Labels for every host of a range.' })
  @ValidateNested({ each: true })
  labels!: LabelInput[];

  @Field(() => [TaintInput], { defaultValue: [], description: 'Taints for every host of a range.' })
  @ValidateNested({ each: true })
  taints!: TaintInput[];

  @Field(() => String, { nullable: true, description: `${ROLE_LABEL_REASON_DESCRIPTION} One reason covers every row.` })
  @IsOptional()
  roleLabelReason?: string | null;

  @Field(() => Boolean, { defaultValue: false, description: 'Add the rows that pass and report the others; by default one bad row stops the whole request.' })
  addValidRows!: boolean;

  @Field(() => Boolean, { defaultValue: false, description: 'Only check the rows; store nothing.' })
  dryRun!: boolean;
}
