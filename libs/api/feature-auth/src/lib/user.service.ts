import { randomBytes, randomUUID } from 'node:crypto';
import type { LockedUserChange, UserEntity, UserSessionEntity, UserStore } from '@ccos/api/data-access-db';
import {
  AppError,
  type AuthenticatedUser,
  BadUserInputError,
  FieldConflictError,
  NotFoundError,
  PreconditionError,
  type RequestOrigin,
  UnauthenticatedError,
} from '@ccos/api/util-graphql';
import { hashPassword, verifyPassword } from '@ccos/api/util-secrets';
import { type Role, checkUsername } from '@ccos/shared/domain';
import { type Message, message } from '@ccos/shared/messages';
import type { LoginThrottle, LoginWait } from './login-throttle';
import { NoPasswordCheckSlot, type PasswordCheckSlots } from './password-check-slots';
import type { SessionService } from './session.service';

/** A stored hash nobody's password matches, so unknown users take as long as known ones. */
let decoyHash: Promise<string> | null = null;

/** Told how sign-ins went, for metrics. */
export type LoginOutcome = 'SUCCESS' | 'WRONG_PASSWORD' | 'DISABLED' | 'THROTTLED' | 'BUSY';

export interface UserServiceParts {
  readonly sessions: SessionService;
  readonly throttle: LoginThrottle;
  readonly slots: PasswordCheckSlots;
  readonly onLogin?: (outcome: LoginOutcome) => void;
}

/** Users, sign-in and what admins do to users. Every rule that keeps an admin in charge lives here. */
export class UserService {
  private readonly sessions: SessionService;
  private readonly throttle: LoginThrottle;
  private readonly slots: PasswordCheckSlots;
  private readonly onLogin: (outcome: LoginOutcome) => void;

  constructor(
    private readonly users: UserStore,
    parts: UserServiceParts,
  ) {
    this.sessions = parts.sessions;
    this.throttle = parts.throttle;
    this.slots = parts.slots;
    this.onLogin = parts.onLogin ?? (() => undefined);
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
    if (await this.users.existsNamed(username)) {
      throw new FieldConflictError('username', message('user.nameTaken', { username }));
    }
    return this.users.insert({ id: randomUUID(), username, passwordHash: await hashPassword(password), role, disabledAt: null });
  }

  /**
   * Checks a password and opens a session. Throttled per (user name, address) and per
   * address before any hash is computed; the hash itself waits for one of a few slots.
   */
  async login(username: string, password: string, origin: RequestOrigin): Promise<{ token: string; expiresAt: Date; user: UserEntity; session: UserSessionEntity }> {
    const { user, valid } = await this.checkPassword(username, password, origin, async () => {
      // A name that is not a valid user name cannot be one (and may hold bytes Postgres refuses).
      const found = checkUsername(username) === null ? await this.users.findByName(username) : null;
      return { user: found, hash: found?.passwordHash ?? null };
    });
    if (!user || !valid) {
      this.onLogin('WRONG_PASSWORD');
      throw new UnauthenticatedError(message('user.wrongPassword'));
    }
    if (user.disabledAt) {
      this.onLogin('DISABLED');
      throw new UnauthenticatedError(message('user.disabled', { username: user.username }));
    }
    user.lastLoginAt = new Date();
    await this.users.update(user.id, { lastLoginAt: user.lastLoginAt });
    const started = await this.sessions.start(user, origin);
    this.onLogin('SUCCESS');
    return { ...started, user };
  }

  /**
   * Resolves a bearer token to the user it names, while its session is open. The role
   * comes from the database, so a changed role, a disabled or deleted user, a sign-out or a
   * password change takes effect at once, not when the token expires.
   */
  authenticate(token: string, options?: { readonly fresh?: boolean }): Promise<AuthenticatedUser | null> {
    return this.sessions.authenticate(token, options);
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findById(id);
  }

  list(): Promise<UserEntity[]> {
    return this.users.list();
  }

  /** The user called `username`; NOT_FOUND for anyone else (a malformed name cannot belong to anyone). */
  async get(username: string): Promise<UserEntity> {
    const user = checkUsername(username) === null ? await this.users.findByName(username) : null;
    if (!user) {
      throw new NotFoundError('user', JSON.stringify(username.slice(0, 64)));
    }
    return user;
  }

  /**
   * Changes the caller's own password after checking the current one (throttled like a
   * sign-in: a stolen session must not become a way to guess it). The caller's session
   * stays open; every other session of theirs ends.
   */
  async changePassword(caller: AuthenticatedUser, currentPassword: string, newPassword: string, origin: RequestOrigin): Promise<void> {
    const { user, valid } = await this.checkPassword(caller.username, currentPassword, origin, async () => {
      const found = await this.users.findById(caller.id);
      return { user: found, hash: found?.passwordHash ?? null };
    });
    if (!user) {
      throw new UnauthenticatedError();
    }
    if (!valid) {
      throw new BadUserInputError('currentPassword', message('user.currentPasswordWrong'));
    }
    await this.users.update(user.id, { passwordHash: await hashPassword(newPassword) });
    await this.sessions.end(user.id, 'ALL', 'password changed', caller.sessionId);
  }

  /** Ends the caller's own session (this device). */
  async signOut(caller: AuthenticatedUser): Promise<void> {
    if (caller.sessionId) {
      await this.sessions.end(caller.id, [caller.sessionId], 'signed out');
    }
  }

  async setRole(username: string, role: Role): Promise<UserEntity> {
    const changed = await this.changeUser(username, (user) => user.role === 'ADMIN' && role !== 'ADMIN' && !user.disabledAt, { code: 'user.change.role', params: { username, role } }, () => ({ role }));
    if (changed.before.role !== role) {
      this.sessions.announceChanged(changed.after.id);
    }
    return changed.after;
  }

  /** Disables a user: no sign-in, and every session ends at once. */
  async disable(username: string): Promise<UserEntity> {
    const { after } = await this.changeUser(username, (user) => user.role === 'ADMIN' && !user.disabledAt, { code: 'user.change.disable', params: { username } }, (user) => ({ disabledAt: user.disabledAt ?? new Date() }));
    await this.sessions.end(after.id, 'ALL', 'user disabled');
    return after;
  }

  async enable(username: string): Promise<UserEntity> {
    const user = await this.get(username);
    await this.users.update(user.id, { disabledAt: null });
    return { ...user, disabledAt: null };
  }

  /** Deletes a user and their sessions; the audit log keeps their name. */
  async delete(username: string): Promise<UserEntity> {
    const { after } = await this.changeUser(username, (user) => user.role === 'ADMIN' && !user.disabledAt, { code: 'user.change.delete', params: { username } }, () => 'DELETE');
    this.sessions.announceEnded(after.id);
    return after;
  }

  /**
   * Applies a change to one user in a transaction that first locks every active admin, so
   * two admins demoting each other at once cannot both succeed: the second sees the first's
   * change and is refused. `removesAnAdmin` says whether the change takes an active admin away.
   */
  private async changeUser(
    username: string,
    removesAnAdmin: (user: UserEntity) => boolean,
    what: Message,
    change: (user: UserEntity) => LockedUserChange,
  ): Promise<{ before: UserEntity; after: UserEntity }> {
    await this.get(username);
    const changed = await this.users.changeLocked(username, (user, activeAdminIds) => {
      if (removesAnAdmin(user) && activeAdminIds.every((id) => id === user.id)) {
        throw new PreconditionError(message('user.lastAdmin', { what, username }), { reason: 'LAST_ADMIN' });
      }
      return change(user);
    });
    if (!changed) {
      throw new NotFoundError('user', JSON.stringify(username));
    }
    return changed;
  }

  /**
   * Checks a password the throttled way: refused while the (user name, address) pair or the
   * address must wait; then in a slot; a wrong password counts against both.
   */
  private async checkPassword(
    username: string,
    password: string,
    origin: RequestOrigin,
    load: () => Promise<{ user: UserEntity | null; hash: string | null }>,
  ): Promise<{ user: UserEntity | null; valid: boolean }> {
    const { wait, known } = await this.throttle.assess(username, origin.address);
    if (wait) {
      this.onLogin('THROTTLED');
      throw throttled(wait);
    }
    let checked: { user: UserEntity | null; valid: boolean };
    try {
      checked = await this.slots.run(
        origin.address,
        async () => {
          // Again: failures may have been counted while this attempt waited for its slot.
          await this.refuseWhileThrottled(username, origin.address);
          const { user, hash } = await load();
          return { user, valid: await verifyPassword(password, hash ?? (await (decoyHash ??= hashPassword(randomUUID())))) };
        },
        known,
      );
    } catch (error) {
      if (error instanceof NoPasswordCheckSlot) {
        this.onLogin('BUSY');
        throw new AppError('LOGIN_BUSY', message('user.loginBusy', { seconds: 1 }), { retryAfterSeconds: 1, reason: error.reason });
      }
      throw error;
    }
    if (checked.valid) {
      await this.throttle.recordSuccess(username, origin.address);
    } else {
      await this.throttle.recordFailure(username, origin.address);
    }
    return checked;
  }

  private async refuseWhileThrottled(username: string, address: string): Promise<void> {
    const wait = await this.throttle.waitFor(username, address);
    if (wait) {
      this.onLogin('THROTTLED');
      throw throttled(wait);
    }
  }
}

function throttled(wait: LoginWait): AppError {
  return new AppError('LOGIN_THROTTLED', message('user.loginThrottled', { scope: wait.scope, seconds: wait.seconds }), { retryAfterSeconds: wait.seconds, scope: wait.scope });
}
