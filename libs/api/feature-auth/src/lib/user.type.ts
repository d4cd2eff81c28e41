import { Field, GraphQLISODateTime, ID, ObjectType } from 'type-graphql';
import { RoleEnum } from '@ccos/api/util-graphql';
import type { Role } from '@ccos/shared/domain';

@ObjectType('User')
export class UserType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  username!: string;

  @Field(() => RoleEnum)
  role!: Role;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  lastLoginAt!: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Since when an admin has disabled the user (no sign-in, no session); null while enabled.' })
  disabledAt!: Date | null;
}

@ObjectType('Session')
export class SessionType {
  @Field(() => String, { description: 'Bearer token for the Authorization header and the WebSocket connection_init payload.' })
  token!: string;

  @Field(() => GraphQLISODateTime)
  expiresAt!: Date;

  @Field(() => UserType)
  user!: UserType;
}
