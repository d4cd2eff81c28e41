import { type DataSource, In, IsNull, LessThan, MoreThan, Not, type Repository } from 'typeorm';
import type { Role } from '@ccos/shared/domain';
import { UserSessionEntity } from './entities/user-session.entity';

/** A session with what `authenticate` needs of its user. */
export interface SessionWithUser {
  readonly id: string;
  readonly userId: string;
  readonly expiresAt: Date;
  readonly lastUsedAt: Date;
  readonly revokedAt: Date | null;
  readonly username: string;
  readonly role: Role;
  readonly userDisabledAt: Date | null;
}

/** `user_sessions`: one row per sign-in, kept a while after it ended. */
export class UserSessionStore {
  private readonly sessions: Repository<UserSessionEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.sessions = dataSource.getRepository(UserSessionEntity);
  }

  /** Deletes the user's sessions that expired or were revoked before `cutoff`. */
  async deleteEndedBefore(userId: string, cutoff: Date): Promise<void> {
    await this.sessions.delete({ userId, expiresAt: LessThan(cutoff) });
    await this.sessions.delete({ userId, revokedAt: LessThan(cutoff) });
  }

  insert(session: Omit<UserSessionEntity, 'revokedAt' | 'revokedReason'>): Promise<UserSessionEntity> {
    return this.sessions.save(this.sessions.create({ ...session, revokedAt: null, revokedReason: null }));
  }

  /** The session and its user in one read (every request does it). */
  async withUser(sessionId: string): Promise<SessionWithUser | null> {
    const [row] = (await this.dataSource.query(
      `SELECT s.id, s.user_id, s.expires_at, s.last_used_at, s.revoked_at, u.username, u.role, u.disabled_at
         FROM user_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id = $1`,
      [sessionId],
    )) as Array<{ id: string; user_id: string; expires_at: Date; last_used_at: Date; revoked_at: Date | null; username: string; role: Role; disabled_at: Date | null }>;
    return row
      ? { id: row.id, userId: row.user_id, expiresAt: row.expires_at, lastUsedAt: row.last_used_at, revokedAt: row.revoked_at, username: row.username, role: row.role, userDisabledAt: row.disabled_at }
      : null;
  }

  async markUsed(sessionId: string, at: Date): Promise<void> {
    await this.sessions.update(sessionId, { lastUsedAt: at });
  }

  /** The user's sessions open at `now`, most recently used first. */
  openOf(userId: string, now: Date): Promise<UserSessionEntity[]> {
    return this.sessions.find({ where: { userId, revokedAt: IsNull(), expiresAt: MoreThan(now) }, order: { lastUsedAt: 'DESC', createdAt: 'DESC' } });
  }

  /** The session while it is open at `now`. */
  findOpen(sessionId: string, now: Date): Promise<UserSessionEntity | null> {
    return this.sessions.findOne({ where: { id: sessionId, revokedAt: IsNull(), expiresAt: MoreThan(now) } });
  }

  /**
   * Revokes the user's open sessions: the listed ones, or every one (but `except`). Returns the
   * ids it revoked.
   */
  async revoke(userId: string, which: { readonly ids: readonly string[] | null; readonly except?: string }, at: Date, reason: string): Promise<string[]> {
    const selected = which.ids ? { id: In([...which.ids]) } : which.except ? { id: Not(which.except) } : {};
    const { raw } = await this.sessions
      .createQueryBuilder()
      .update(UserSessionEntity)
      .set({ revokedAt: at, revokedReason: reason })
      .where({ userId, revokedAt: IsNull(), ...selected })
      .returning('id')
      .execute();
    return (raw as Array<{ id: string }>).map((row) => row.id);
  }
}
