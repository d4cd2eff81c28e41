import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { UserEntity } from '@ccos/api/data-access-db';
import type { AuthenticatedUser, RequestContext } from '@ccos/api/util-graphql';
import { BadUserInputError, Secret, UnauthenticatedError } from '@ccos/api/util-graphql';
import { checkPassword } from '@ccos/shared/domain';
import type { UserService } from './user.service';
import { SessionType, UserType } from './user.type';

@Resolver()
export class AuthResolver {
  constructor(private readonly userService: UserService) {}

  @Mutation(() => SessionType, {
    description:
      'Signs in; the token goes in `Authorization: Bearer <token>`. Wrong passwords are throttled per user name and source address ' +
      '(LOGIN_THROTTLED, with `retryAfterSeconds`); LOGIN_BUSY when too many sign-ins are being checked at once.',
  })
  async login(@Ctx() context: RequestContext, @Arg('username', () => String) username: string, @Arg('password', () => String) @Secret() password: string): Promise<SessionType> {
    const { token, expiresAt, user } = await this.userService.login(username, password, context.origin);
    return { token, expiresAt, user: toUserType(user) };
  }

  @Authorized('VIEWER')
  @Query(() => UserType, { description: 'The signed-in user.' })
  async me(@Ctx() context: RequestContext): Promise<UserType> {
    const user = await this.userService.findById(signedIn(context).id);
    if (!user) {
      throw new UnauthenticatedError();
    }
    return toUserType(user);
  }

  @Authorized('VIEWER')
  @Mutation(() => Boolean, { description: 'Signs out this session (this device); `revokeAllSessions` signs out the others.' })
  async logout(@Ctx() context: RequestContext): Promise<boolean> {
    await this.userService.signOut(signedIn(context));
    return true;
  }

  @Authorized('VIEWER')
  @Mutation(() => Boolean, { description: "Changes the signed-in user's own password; this session stays, every other session of theirs ends." })
  async changePassword(
    @Ctx() context: RequestContext,
    @Arg('currentPassword', () => String) @Secret() currentPassword: string,
    @Arg('newPassword', () => String) @Secret() newPassword: string,
  ): Promise<boolean> {
    const problem = checkPassword(newPassword);
    if (problem) {
      throw new BadUserInputError('newPassword', problem);
    }
    await this.userService.changePassword(signedIn(context), currentPassword, newPassword, context.origin);
    return true;
  }
}

/** The caller of an `@Authorized` operation (the auth checker has let only signed-in users through). */
export function signedIn(context: RequestContext): AuthenticatedUser {
  if (!context.user) {
    throw new UnauthenticatedError();
  }
  return context.user;
}

/** Copies only the public fields: the password hash never reaches a response, even by accident. */
export function toUserType(user: UserEntity): UserType {
  const { id, username, role, createdAt, lastLoginAt, disabledAt } = user;
  return { id, username, role, createdAt, lastLoginAt, disabledAt };
}
