import { Arg, Authorized, Mutation, Query, Resolver } from 'type-graphql';
import { RoleEnum } from '@ccos/api/util-graphql';
import type { Role } from '@ccos/shared/domain';
import { toUserType } from './auth.resolver';
import { CreateUserInput } from './create-user.input';
import type { UserService } from './user.service';
import { UserType } from './user.type';

/**
 * What admins do to users. Users are named by `username` (unique and never renamed), so
 * the audit log records every change under the name of the user it concerns.
 */
@Resolver(() => UserType)
export class UserResolver {
  constructor(private readonly userService: UserService) {}

  @Authorized('ADMIN')
  @Query(() => [UserType])
  async users(): Promise<UserType[]> {
    return (await this.userService.list()).map(toUserType);
  }

  @Authorized('ADMIN')
  @Mutation(() => UserType)
  async createUser(@Arg('input', () => CreateUserInput) input: CreateUserInput): Promise<UserType> {
    return toUserType(await this.userService.create(input.username, input.password, input.role));
  }

  @Authorized('ADMIN')
  @Mutation(() => UserType, { description: 'Changes a user\'s role; refused (FAILED_PRECONDITION) when it would leave no active ADMIN.' })
  async setUserRole(@Arg('username', () => String) username: string, @Arg('role', () => RoleEnum) role: Role): Promise<UserType> {
    return toUserType(await this.userService.setRole(username, role));
  }

  @Authorized('ADMIN')
  @Mutation(() => UserType, { description: 'Disables a user: every session ends at once and sign-in is refused until enabled; never the last active ADMIN.' })
  async disableUser(@Arg('username', () => String) username: string): Promise<UserType> {
    return toUserType(await this.userService.disable(username));
  }

  @Authorized('ADMIN')
  @Mutation(() => UserType, { description: 'Lets a disabled user sign in again.' })
  async enableUser(@Arg('username', () => String) username: string): Promise<UserType> {
    return toUserType(await this.userService.enable(username));
  }

  @Authorized('ADMIN')
  @Mutation(() => UserType, { description: 'Deletes a user and their sessions, and returns them as they were; never the last active ADMIN. The audit log keeps their name.' })
  async deleteUser(@Arg('username', () => String) username: string): Promise<UserType> {
    return toUserType(await this.userService.delete(username));
  }
}
