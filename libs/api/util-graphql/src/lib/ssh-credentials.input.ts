import 'reflect-metadata';
import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { checkSshUser } from '@ccos/shared/domain';
import { MultiLine, Secret } from './input-marks';
import { Satisfies } from './validation';

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

