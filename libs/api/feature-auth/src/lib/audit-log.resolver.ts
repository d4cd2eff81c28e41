import { Arg, Authorized, ID, Int, Query, Resolver } from 'type-graphql';
import type { AuditLog, AuditLogEntity } from '@ccos/api/data-access-db';
import { BadUserInputError, checkPageSize } from '@ccos/api/util-graphql';
import { message } from '@ccos/shared/messages';
import { type AuditEntryType, AuditLogFilter, AuditLogPageType } from './audit-entry.type';

const MAX_PAGE = 200;

@Resolver()
export class AuditLogResolver {
  constructor(private readonly trail: AuditLog) {}

  @Authorized('ADMIN')
  @Query(() => AuditLogPageType, { description: 'The audit trail, newest first: every mutation of users and agents, and the CSR auto-approver\'s decisions.' })
  async auditLog(
    @Arg('filter', () => AuditLogFilter, { nullable: true }) filter: AuditLogFilter | null,
    @Arg('first', () => Int, { defaultValue: 50, description: `Page size, 1–${MAX_PAGE}.` }) first: number,
    @Arg('before', () => ID, { nullable: true, description: 'The id of the last entry of the previous page.' }) before: string | null | undefined,
  ): Promise<AuditLogPageType> {
    checkPageSize('first', first, MAX_PAGE);
    if (before != null && !/^[1-9]\d{0,18}$/.test(before)) {
      throw new BadUserInputError('before', message('audit.beforeNotId'));
    }
    const page = await this.trail.search({ ...filter, before, limit: first });
    return { entries: page.entries.map(toAuditEntry), hasMore: page.hasMore };
  }
}

function toAuditEntry(entry: AuditLogEntity): AuditEntryType {
  const code = entry.detail['code'];
  return { ...entry, code: typeof code === 'string' ? code : null };
}
