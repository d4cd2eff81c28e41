import { Field, GraphQLISODateTime, ID, ObjectType } from 'type-graphql';

@ObjectType('UserSession', { description: 'One sign-in on one device; signing it out ends its token at once.' })
export class UserSessionType {
  @Field(() => ID)
  id!: string;

  @Field(() => GraphQLISODateTime, { description: 'When the user signed in.' })
  createdAt!: Date;

  @Field(() => GraphQLISODateTime, { description: 'The last request with it, to the minute.' })
  lastUsedAt!: Date;

  @Field(() => GraphQLISODateTime)
  expiresAt!: Date;

  @Field(() => String, { description: 'The address the sign-in came from.' })
  sourceAddress!: string;

  @Field(() => String, { nullable: true, description: 'The browser or client that signed in, as it named itself.' })
  userAgent!: string | null;

  @Field(() => Boolean, { description: 'Whether this is the session of the request asking.' })
  current!: boolean;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When it was signed out; null while open.' })
  revokedAt!: Date | null;
}
