import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import type { Role } from '@ccos/shared/domain';
import { UserEntity } from '@ccos/api/data-access-db';
import { AppError, BadUserInputError, ConflictError, UnauthenticatedError, type AuthenticatedUser } from '@ccos/api/util-graphql';
import { hashPassword, verifyPassword } from '@ccos/api/util-secrets';
import { LoginThrottle } from './login-throttle';
import type { SessionTokens } from './session-tokens';

/** A stored hash nobody's password matches, so unknown users take as long as known ones. */
let decoyHash: Promise<string> | null = null;

export class UserService {
  private readonly users: Repository<UserEntity>;
  private readonly throttle = new LoginThrottle();

  constructor(
    dataSource: DataSource,
    private readonly tokens: SessionTokens,
    /** Told after a user's sessions ended, so live connections can close as well. */
    private readonly onSessionsEnded: (userId: string) => void = () => undefined,
  ) {
    this.users = dataSource.getRepository(UserEntity);
  }

  /**
   * On the first start, creates `admin` with `password`, or with a generated one that is
   * returned so the caller can print it once. Returns null when users already exist.
   */
  async ensureInitialAdmin(password: string | undefined): Promise<{ username: string; generatedPassword: string | null } | null> {
    if ((await this.users.count()) > 0) {
      return null;
    }
    const chosen = password ?? randomBytes(18).toString('base64url');
    await this.create('admin', chosen, 'ADMIN');
    return { username: 'admin', generatedPassword: password ? null : chosen };
  }

  async create(username: string, password: string, role: Role): Promise<UserEntity> {
    if (await this.users.existsBy({ username })) {
      throw new ConflictError(`username "${username}" is already taken`, { field: 'username' });
    }
    return this.users.save(this.users.create({ id: randomUUID(), username, passwordHash: await hashPassword(password), role }));
  }

  async login(username: string, password: string): Promise<{ token: string; expiresAt: Date; user: UserEntity }> {
    const wait = this.throttle.lockedFor(username);
    if (wait > 0) {
      throw new AppError('UNAUTHENTICATED', `too many failed sign-ins for "${username}"; try again in ${wait} s`, { retryAfterSeconds: wait });
    }
    const user = await this.users.findOneBy({ username });
    const valid = await verifyPassword(password, user?.passwordHash ?? (await (decoyHash ??= hashPassword(randomUUID()))));
    if (!user || !valid) {
      this.throttle.recordFailure(username);
      throw new UnauthenticatedError('wrong user name or password');
    }
    this.throttle.recordSuccess(username);
    user.lastLoginAt = new Date();
    await this.users.update(user.id, { lastLoginAt: user.lastLoginAt });
    const session = await this.tokens.issue({ userId: user.id, username: user.username, role: user.role, generation: user.sessionGeneration });
    return { ...session, user };
  }

  /**
   * Resolves a bearer token to the user it names. The role comes from the database, so a
   * changed role, a deleted user, a sign-out or a password change takes effect at once,
   * not when the token expires.
   */
  async authenticate(token: string): Promise<AuthenticatedUser | null> {
    const claims = await this.tokens.verify(token);
    if (!claims) {
      return null;
    }
    const user = await this.users.findOneBy({ id: claims.userId });
    // A token from before a sign-out or password change is no longer valid.
    return user && user.sessionGeneration === claims.generation ? { id: user.id, username: user.username, role: user.role, sessionExpiresAt: claims.expiresAt } : null;
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  list(): Promise<UserEntity[]> {
    return this.users.find({ order: { username: 'ASC' } });
  }

  async changePassword(userId: string, currentPassword: string, newPassword: string): Promise<void> {
    const user = await this.users.findOneByOrFail({ id: userId });
    if (!(await verifyPassword(currentPassword, user.passwordHash))) {
      throw new BadUserInputError('currentPassword', 'is wrong');
    }
    await this.users.update(user.id, { passwordHash: await hashPassword(newPassword), sessionGeneration: user.sessionGeneration + 1 });
    this.onSessionsEnded(user.id);
  }

  /** Ends every session of a user (their sign-out, on every device). */
  async endSessions(userId: string): Promise<void> {
    await this.users.increment({ id: userId }, 'sessionGeneration', 1);
    this.onSessionsEnded(userId);
  }
}
