import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '@ccos/api/util-graphql';
import { BadUserInputError, Secret, UnauthenticatedError } from '@ccos/api/util-graphql';
import { checkPassword } from '@ccos/shared/domain';
import { CreateUserInput } from './create-user.input';
import { SessionType, UserType } from './user.type';
import type { UserService } from './user.service';

@Resolver()
export class AuthResolver {
  constructor(private readonly userService: UserService) {}

  @Mutation(() => SessionType, { description: 'Signs in; the token goes in `Authorization: Bearer <token>`.' })
  async login(@Arg('username', () => String) username: string, @Arg('password', () => String) @Secret() password: string): Promise<SessionType> {
    return this.userService.login(username, password);
  }

  @Authorized('VIEWER')
  @Query(() => UserType, { description: 'The signed-in user.' })
  async me(@Ctx() context: RequestContext): Promise<UserType> {
    const user = context.user ? await this.userService.findById(context.user.id) : null;
    if (!user) {
      throw new UnauthenticatedError();
    }
    return user;
  }

  @Authorized('ADMIN')
  @Query(() => [UserType])
  users(): Promise<UserType[]> {
    return this.userService.list();
  }

  @Authorized('ADMIN')
  @Mutation(() => UserType)
  createUser(@Arg('input', () => CreateUserInput) input: CreateUserInput): Promise<UserType> {
    return this.userService.create(input.username, input.password, input.role);
  }

  @Authorized('VIEWER')
  @Mutation(() => Boolean, { description: 'Signs out: ends every session of the signed-in user, on every device.' })
  async logout(@Ctx() context: RequestContext): Promise<boolean> {
    await this.userService.endSessions(context.user?.id ?? '');
    return true;
  }

  @Authorized('VIEWER')
  @Mutation(() => Boolean, { description: 'Changes the signed-in user\'s own password and ends all of their sessions (sign in again).' })
  async changePassword(
    @Ctx() context: RequestContext,
    @Arg('currentPassword', () => String) @Secret() currentPassword: string,
    @Arg('newPassword', () => String) @Secret() newPassword: string,
  ): Promise<boolean> {
    const problem = checkPassword(newPassword);
    if (problem) {
      throw new BadUserInputError('newPassword', problem);
    }
    await this.userService.changePassword(context.user?.id ?? '', currentPassword, newPassword);
    return true;
  }
}
