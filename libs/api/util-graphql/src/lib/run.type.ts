import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, GraphQLISODateTime, ID, Int, InterfaceType } from 'type-graphql';
import type { Message } from '@ccos/shared/messages';
import { type CodedFields, MessageCodeField, MessageParamsField, codedFields } from './message-code-fields';

/**
 * What every event of a run's log shows: install runs' StepEvent and removal runs' RemovalEvent
 * implement it, each adding what its events say. A type that implements it redeclares a field
 * only to keep its own description or to narrow it (RemovalEvent's message is never null).
 */
@InterfaceType('RunEvent', { description: 'One event of a run (install or removal), in order (seq).' })
export abstract class RunEventType {
  @Field(() => Int)
  seq!: number;

  @Field(() => String, { nullable: true })
  message!: string | null;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'What the event is about beyond its message.' })
  detail!: Record<string, unknown> | null;

  @Field(() => GraphQLISODateTime)
  occurredAt!: Date;
}

/**
 * The header every run of a node shows (InstallRun, RemovalRun), with its log. A run's status is
 * not here: each kind has its own list of statuses.
 */
@InterfaceType('Run', { description: 'One run of an operation on a node (install or removal) and its ordered events.' })
export abstract class RunType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  nodeId!: string;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @MessageCodeField('reason')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => String)
  requestedBy!: string;

  @Field(() => GraphQLISODateTime)
  startedAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => Int, { description: 'Sequence number of the last event so far.' })
  lastSeq!: number;

  // Optional here because a run type may resolve it in a field resolver (RemovalRun does).
  @Field(() => [RunEventType], { description: 'Everything the run did, in order.' })
  events?: RunEventType[];
}

/** A run event as it is stored (data-access-db's `RunEventColumns`). */
export interface StoredRunEvent {
  readonly seq: number;
  readonly message: string | null;
  readonly messageCoded: Message | null;
  readonly detail: Record<string, unknown> | null;
  readonly occurredAt: Date;
}

/** A run's header as it is stored (data-access-db's `RunColumns`). */
export interface StoredRun {
  readonly id: string;
  readonly nodeId: string;
  readonly reason: string | null;
  readonly reasonCoded: Message | null;
  readonly requestedBy: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
}

/** The {@link RunEventType} fields of a stored event; its kind adds its own. */
export function runEventFields<Event extends StoredRunEvent>(
  event: Event,
): { seq: number; message: Event['message']; detail: Record<string, unknown> | null; occurredAt: Date } & CodedFields<'message'> {
  return { seq: event.seq, message: event.message, ...codedFields('message', event.messageCoded), detail: event.detail, occurredAt: event.occurredAt };
}

/** The {@link RunType} header fields of a stored run, whose last event is `lastSeq`; its kind adds its own. */
export function runFields(run: StoredRun, lastSeq: number): Omit<RunType, 'events'> {
  return {
    id: run.id,
    nodeId: run.nodeId,
    reason: run.reason,
    ...codedFields('reason', run.reasonCoded),
    requestedBy: run.requestedBy,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    lastSeq,
  };
}
