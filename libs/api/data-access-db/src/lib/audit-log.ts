import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { type AuditEntry, type AuditResult, type AuditTrail, storableText } from '@ccos/api/util-graphql';
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
export class AuditLog implements AuditTrail {
  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes an entry after the fact (a refusal, a controller's decision); a failed write is logged
   * loudly but never hides the user's own result.
   */
  async record(entry: AuditEntry): Promise<void> {
    try {
      await this.insert(entry);
    } catch (error) {
      this.logger.error({ err: error, action: entry.action, actor: entry.actor }, 'could not write the audit log');
    }
  }

  /** Writes an entry as PENDING before its action; throws when it cannot, so the action is not done. */
  async begin(entry: Omit<AuditEntry, 'result'>): Promise<string> {
    return this.insert({ ...entry, result: 'PENDING' });
  }

  async complete(id: string, result: Exclude<AuditResult, 'PENDING'>, extra: Record<string, unknown>): Promise<void> {
    try {
      // jsonb || merges the outcome into what begin() stored, in one statement.
      await this.dataSource.query('UPDATE audit_log SET result = $1, detail = detail || $2::jsonb WHERE id = $3', [result, JSON.stringify(storable(extra)), id]);
    } catch (error) {
      this.logger.error({ err: error, auditEntryId: id, result }, 'could not complete an audit entry; it stays PENDING');
    }
  }

  private async insert(entry: AuditEntry): Promise<string> {
    const repository = this.dataSource.getRepository(AuditLogEntity);
    const saved = await repository.save(repository.create(storable(entry) as AuditEntry));
    return saved.id;
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

/** The entry as Postgres can store it: what was sent, with unstorable characters made visible (see storableText). */
function storable(value: unknown): unknown {
  if (typeof value === 'string') {
    return storableText(value);
  }
  if (Array.isArray(value)) {
    return value.map(storable);
  }
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [storableText(key), storable(inner)]));
  }
  return value;
}
