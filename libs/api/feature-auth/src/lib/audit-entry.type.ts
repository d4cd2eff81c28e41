import { IsOptional, MaxLength } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, GraphQLISODateTime, ID, InputType, ObjectType } from 'type-graphql';
import { type AuditResult, AuditResultEnum } from '@ccos/api/util-graphql';

@ObjectType('AuditEntry', { description: 'One action: who did what to which target, and how it ended. Secrets are never recorded.' })
export class AuditEntryType {
  @Field(() => ID)
  id!: string;

  @Field(() => GraphQLISODateTime)
  at!: Date;

  @Field(() => String, { description: 'The user name, `agent` for a boot-worker, `auto-approver` for the CSR controller, or `anonymous`.' })
  actor!: string;

  @Field(() => String, { description: 'The mutation or controller action, e.g. `addNode`, `approveCsr`.' })
  action!: string;

  @Field(() => String)
  targetType!: string;

  @Field(() => String, { nullable: true, description: 'The id or name acted on, as far as the action names one.' })
  targetId!: string | null;

  @Field(() => AuditResultEnum)
  result!: AuditResult;

  @Field(() => String, { nullable: true, description: 'The error code of a failure or refusal (BAD_USER_INPUT, FORBIDDEN …).' })
  code!: string | null;

  @Field(() => GraphQLJSONObject, { description: 'The arguments (secrets shown as [redacted]) and what else the action recorded.' })
  detail!: Record<string, unknown>;
}

@ObjectType('AuditLogPage')
export class AuditLogPageType {
  @Field(() => [AuditEntryType], { description: 'Newest first.' })
  entries!: AuditEntryType[];

  @Field(() => Boolean, { description: 'Older entries match too: ask again with `before` set to the last id.' })
  hasMore!: boolean;
}

@InputType({ description: 'Every given field must match exactly.' })
export class AuditLogFilter {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(256)
  actor?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(256)
  action?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(256)
  targetId?: string | null;

  @Field(() => AuditResultEnum, { nullable: true })
  result?: AuditResult | null;
}
