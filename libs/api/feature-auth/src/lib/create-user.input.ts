import { Length, Matches } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import type { Role } from '@ccos/shared/domain';
import { RoleEnum } from '@ccos/api/util-graphql';

@InputType()
export class CreateUserInput {
  @Field(() => String)
  @Matches(/^[a-z][a-z0-9._-]{1,31}$/, { message: 'must be 2–32 lower-case letters, digits, ".", "_" or "-", starting with a letter' })
  username!: string;

  @Field(() => String)
  @Length(12, 256, { message: 'must be 12 to 256 characters long' })
  password!: string;

  @Field(() => RoleEnum)
  role!: Role;
}
