import { Field, InputType } from 'type-graphql';
import { RoleEnum, Satisfies, Secret } from '@ccos/api/util-graphql';
import { type Role, checkPassword, checkUsername } from '@ccos/shared/domain';

@InputType()
export class CreateUserInput {
  @Field(() => String)
  @Satisfies(checkUsername)
  username!: string;

  @Field(() => String)
  @Secret()
  @Satisfies(checkPassword)
  password!: string;

  @Field(() => RoleEnum)
  role!: Role;
}
