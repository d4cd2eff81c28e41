import 'reflect-metadata';
import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { checkHostname, checkIp, checkPort, checkSshUser } from '@ccos/shared/domain';
import { MultiLine, Secret } from './input-marks';
import { Satisfies, coded } from './validation';

/** The secret half of SSH credentials: a password, or a private key with an optional passphrase. Write-only; a part of other inputs, never one on its own. */
@InputType()
export class SshSecretsInput {
  @Field(() => String, { nullable: true })
  @Secret()
  @IsOptional()
  @MaxLength(1024, coded('validation.tooLong', { max: 1024 }))
  password?: string | null;

  @Field(() => String, { nullable: true, description: 'PEM or OpenSSH private key.' })
  @Secret()
  @MultiLine()
  @IsOptional()
  @MaxLength(32 * 1024, coded('validation.tooLarge', { kib: 32 }))
  privateKey?: string | null;

  @Field(() => String, { nullable: true })
  @Secret()
  @IsOptional()
  @MaxLength(1024, coded('validation.tooLong', { max: 1024 }))
  passphrase?: string | null;
}

/** SSH credentials: the login user, and a password or a private key with an optional passphrase. Write-only. */
@InputType()
export class SshCredentialsInput extends SshSecretsInput {
  @Field(() => String, { defaultValue: 'root' })
  @Satisfies(checkSshUser)
  sshUser!: string;
}

/**
 * A host as every input that takes one names it: its node name, address, SSH port and
 * credentials, with the domain's checks (the same the console's forms and the bulk rows use).
 * A part of other inputs (addNode's, addNodeGroupSpare's), never one on its own.
 */
@InputType()
export class HostAccessInput extends SshCredentialsInput {
  @Field(() => String, { description: 'The node name: an RFC 1123 host name, lower case.' })
  @Satisfies(checkHostname)
  hostname!: string;

  @Field(() => String)
  @Satisfies(checkIp)
  ip!: string;

  @Field(() => Int, { defaultValue: 22 })
  @Satisfies(checkPort)
  sshPort!: number;
}
