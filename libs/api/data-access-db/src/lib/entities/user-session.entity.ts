import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One sign-in: a bearer token names its session, so a device can be signed out on its own. */
@Entity({ name: 'user_sessions' })
export class UserSessionEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Updated at most once a minute, so a busy console does not write on every request. */
  @Column({ name: 'last_used_at', type: 'timestamptz' })
  lastUsedAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  /** The address the sign-in came from (behind a trusted proxy: the client's, from X-Forwarded-For). */
  @Column({ name: 'source_address', type: 'text' })
  sourceAddress!: string;

  @Column({ name: 'user_agent', type: 'text', nullable: true })
  userAgent!: string | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  /** Why it ended early: signed out, signed out elsewhere, password changed, user disabled … */
  @Column({ name: 'revoked_reason', type: 'text', nullable: true })
  revokedReason!: string | null;
}
