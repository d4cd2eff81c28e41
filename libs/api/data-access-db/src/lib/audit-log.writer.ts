import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { AuditEntry, AuditSink } from '@ccos/api/util-graphql';
import { AuditLogEntity } from './entities/audit-log.entity';

/** Writes audit entries; a failed write is logged loudly but never hides the user's own result. */
export class AuditLogWriter implements AuditSink {
  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    try {
      const repository = this.dataSource.getRepository(AuditLogEntity);
      await repository.save(repository.create(entry));
    } catch (error) {
      this.logger.error({ err: error, action: entry.action, actor: entry.actor }, 'could not write the audit log');
    }
  }

  async recent(limit: number): Promise<AuditLogEntity[]> {
    return this.dataSource.getRepository(AuditLogEntity).find({ order: { id: 'DESC' }, take: limit });
  }
}
