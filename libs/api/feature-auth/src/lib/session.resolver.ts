import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { UserSessionEntity } from '@ccos/api/data-access-db';
import { type AuthenticatedUser, ForbiddenError, NotFoundError, type RequestContext } from '@ccos/api/util-graphql';
import { signedIn, toUserType } from './auth.resolver';
import type { SessionEndReason, SessionService } from './session.service';
import { UserSessionType } from './user-session.type';
import type { UserService } from './user.service';
import { UserType } from './user.type';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Sessions: everyone sees and signs out their own; admins anyone's. */
@Resolver(() => UserSessionType)
export class SessionResolver {
  constructor(
    private readonly users: UserService,
    private readonly sessionService: SessionService,
  ) {}

  @Authorized('VIEWER')
  @Query(() => [UserSessionType], { description: 'The signed-in user\'s open sessions, most recently used first.' })
  async mySessions(@Ctx() context: RequestContext): Promise<UserSessionType[]> {
    const caller = signedIn(context);
    return (await this.sessionService.active(caller.id)).map((session) => toSessionType(session, caller));
  }

  @Authorized('ADMIN')
  @Query(() => [UserSessionType], { description: 'A user\'s open sessions, most recently used first.' })
  async sessions(@Ctx() context: RequestContext, @Arg('username', () => String) username: string): Promise<UserSessionType[]> {
    const user = await this.users.get(username);
    return (await this.sessionService.active(user.id)).map((session) => toSessionType(session, signedIn(context)));
  }

  @Authorized('VIEWER')
  @Mutation(() => UserSessionType, { description: 'Signs out one session: one of the caller\'s own, or (ADMIN) anyone\'s. Its token stops working at once on every replica.' })
  async revokeSession(@Ctx() context: RequestContext, @Arg('id', () => ID) id: string): Promise<UserSessionType> {
    const caller = signedIn(context);
    const session = UUID.test(id) ? await this.sessionService.findOpen(id.toLowerCase()) : null;
    // Someone else's session is "not found" to a non-admin: its existence is not theirs to learn.
    if (!session || (session.userId !== caller.id && caller.role !== 'ADMIN')) {
      throw new NotFoundError('open session', id.slice(0, 64));
    }
    const reason: SessionEndReason = session.userId !== caller.id ? 'signed out by an administrator' : session.id === caller.sessionId ? 'signed out' : 'signed out elsewhere';
    await this.sessionService.end(session.userId, [session.id], reason);
    return { ...toSessionType(session, caller), revokedAt: new Date() };
  }

  @Authorized('VIEWER')
  @Mutation(() => UserType, {
    description:
      'Signs out every session of a user: the caller\'s own (no `username`), or (ADMIN) anyone\'s. `keepCurrent` keeps the calling session, ' +
      'to sign out "all other devices". Returns the user.',
  })
  async revokeAllSessions(
    @Ctx() context: RequestContext,
    @Arg('username', () => String, { nullable: true }) username: string | null | undefined,
    @Arg('keepCurrent', () => Boolean, { defaultValue: false }) keepCurrent: boolean,
  ): Promise<UserType> {
    const caller = signedIn(context);
    const own = username == null || username === caller.username;
    if (!own && caller.role !== 'ADMIN') {
      throw new ForbiddenError('ADMIN', caller.role);
    }
    const user = own ? await this.users.findById(caller.id) : await this.users.get(username);
    if (!user) {
      throw new NotFoundError('user', caller.username);
    }
    const reason: SessionEndReason = !own ? 'signed out by an administrator' : keepCurrent ? 'signed out elsewhere' : 'signed out';
    await this.sessionService.end(user.id, 'ALL', reason, own && keepCurrent ? caller.sessionId : undefined);
    return toUserType(user);
  }
}

function toSessionType(session: UserSessionEntity, caller: AuthenticatedUser): UserSessionType {
  const { id, createdAt, lastUsedAt, expiresAt, sourceAddress, userAgent, revokedAt } = session;
  return { id, createdAt, lastUsedAt, expiresAt, sourceAddress, userAgent, revokedAt, current: id === caller.sessionId };
}
