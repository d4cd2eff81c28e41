import { type DataSource, type Repository } from 'typeorm';
import type { Role } from '@ccos/shared/domain';
import { UserEntity } from './entities/user.entity';

/** A change to one user under the admin lock of {@link UserStore.changeLocked}. */
export type LockedUserChange = { readonly role: Role } | { readonly disabledAt: Date } | 'DELETE';

/** `users`: accounts, looked up by id or name. */
export class UserStore {
  private readonly users: Repository<UserEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.users = dataSource.getRepository(UserEntity);
  }

  count(): Promise<number> {
    return this.users.count();
  }

  existsNamed(username: string): Promise<boolean> {
    return this.users.existsBy({ username });
  }

  insert(user: Pick<UserEntity, 'id' | 'username' | 'passwordHash' | 'role' | 'disabledAt'>): Promise<UserEntity> {
    return this.users.save(this.users.create(user));
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  findByName(username: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ username });
  }

  /** Every user, by name. */
  list(): Promise<UserEntity[]> {
    return this.users.find({ order: { username: 'ASC' } });
  }

  async update(id: string, fields: Partial<Pick<UserEntity, 'lastLoginAt' | 'passwordHash' | 'disabledAt'>>): Promise<void> {
    await this.users.update(id, fields);
  }

  /**
   * Changes the user called `username` in a transaction that first locks every active ADMIN
   * (then the user), so two admins demoting each other at once cannot both succeed: the second
   * sees the first's change. `decide` gets the locked user and the active admins' ids and
   * returns the change, or throws to refuse it. Null when there is no such user.
   */
  changeLocked(username: string, decide: (user: UserEntity, activeAdminIds: readonly string[]) => LockedUserChange): Promise<{ before: UserEntity; after: UserEntity } | null> {
    return this.dataSource.transaction(async (manager) => {
      const admins = (await manager.query(`SELECT id FROM users WHERE role = 'ADMIN' AND disabled_at IS NULL ORDER BY id FOR UPDATE`)) as Array<{ id: string }>;
      const user = await manager.findOne(UserEntity, { where: { username }, lock: { mode: 'pessimistic_write' } });
      if (!user) {
        return null;
      }
      const change = decide(user, admins.map((admin) => admin.id));
      if (change === 'DELETE') {
        await manager.delete(UserEntity, user.id);
        return { before: user, after: user };
      }
      await manager.update(UserEntity, user.id, change);
      return { before: user, after: { ...user, ...change } };
    });
  }
}
