import 'reflect-metadata';
import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { checkSshUser } from '@ccos/shared/domain';
import { MultiLine, Secret } from './input-marks';
import { Satisfies, coded } from './validation';

/** SSH credentials: a password, or a private key with an optional passphrase. Write-only. */
@InputType()
export class SshCredentialsInput {
  @Field(() => String, { defaultValue: 'root' })
  @Satisfies(checkSshUser)
  sshUser!: string;

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

