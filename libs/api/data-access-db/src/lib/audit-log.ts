import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { AuditEntry, AuditResult, AuditSink } from '@ccos/api/util-graphql';
import { AuditLogEntity } from './entities/audit-log.entity';

/** Which entries to read, newest first; every given field must match. */
export interface AuditLogSearch {
  readonly actor?: string | null;
  readonly action?: string | null;
  readonly targetId?: string | null;
  readonly result?: AuditResult | null;
  /** Only entries older than this one (the id of the last entry of the previous page). */
  readonly before?: string | null;
  readonly limit: number;
}

/** The audit trail: who did what to which target, and how it ended. */
export class AuditLog implements AuditSink {
  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
  ) {}

  /** Writes an entry; a failed write is logged loudly but never hides the user's own result. */
  async record(entry: AuditEntry): Promise<void> {
    try {
      const repository = this.dataSource.getRepository(AuditLogEntity);
      await repository.save(repository.create(entry));
    } catch (error) {
      this.logger.error({ err: error, action: entry.action, actor: entry.actor }, 'could not write the audit log');
    }
  }

  /** One page of entries, newest first, and whether older ones match too. */
  async search(search: AuditLogSearch): Promise<{ entries: AuditLogEntity[]; hasMore: boolean }> {
    const query = this.dataSource.getRepository(AuditLogEntity).createQueryBuilder('entry').orderBy('entry.id', 'DESC').take(search.limit + 1);
    for (const field of ['actor', 'action', 'targetId', 'result'] as const) {
      const value = search[field];
      if (value) {
        query.andWhere(`entry.${field} = :${field}`, { [field]: value });
      }
    }
    if (search.before) {
      query.andWhere('entry.id < :before', { before: search.before });
    }
    const found = await query.getMany();
    return { entries: found.slice(0, search.limit), hasMore: found.length > search.limit };
  }
}
