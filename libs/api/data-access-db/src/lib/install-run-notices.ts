import type { DataSource } from 'typeorm';
import { type InstallRunNoticeKind, InstallRunNoticeEntity } from './entities/install-run-notice.entity';

/** One occurrence of something the service raises on a run. */
export interface InstallRunNoticeInput {
  readonly runId: string;
  readonly kind: InstallRunNoticeKind;
  readonly subject: string;
  readonly message: string;
  readonly detail?: Record<string, unknown> | null;
}

/** `install_run_notices`: raised by the service on a run, one row per run, kind and subject, counted. */
export class InstallRunNotices {
  constructor(private readonly dataSource: DataSource) {}

  /** Records an occurrence: a new notice, or the existing one counted up with the latest message. */
  async raise(notice: InstallRunNoticeInput): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO install_run_notices (run_id, kind, subject, message, detail) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (run_id, kind, subject) DO UPDATE
         SET count = install_run_notices.count + 1, message = EXCLUDED.message, detail = EXCLUDED.detail, last_at = now()`,
      [notice.runId, notice.kind, notice.subject, notice.message, notice.detail ?? null],
    );
  }

  /** A run's notices, oldest first. */
  of(runId: string): Promise<InstallRunNoticeEntity[]> {
    return this.dataSource.getRepository(InstallRunNoticeEntity).find({ where: { runId }, order: { firstAt: 'ASC', id: 'ASC' } });
  }
}
