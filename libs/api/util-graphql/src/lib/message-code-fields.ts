import { GraphQLJSONObject } from 'graphql-scalars';
import { Field } from 'type-graphql';
import type { Message, MessageParams } from '@ccos/shared/messages';

/**
 * A text the server produces travels as its English beside its message code and parameters
 * (libs/shared/messages), so clients show it in their language. These two decorators declare that
 * pair for the text field `text`: `@MessageCodeField('reason') reasonCode` and
 * `@MessageParamsField('reason') reasonParams`.
 */
export function MessageCodeField(text: string, note = ', for clients that show it in their language'): ReturnType<typeof Field> {
  return Field(() => String, { nullable: true, description: `The message code of ${text} (libs/shared/messages)${note}.` });
}

export function MessageParamsField(text: string): ReturnType<typeof Field> {
  return Field(() => GraphQLJSONObject, { nullable: true, description: `The parameters of ${text}Code.` });
}

/** The `<text>Code` and `<text>Params` fields of a view (see {@link MessageCodeField}). */
export type CodedFields<T extends string> = { [K in `${T}Code`]: string | null } & { [K in `${T}Params`]: MessageParams | null };

/**
 * The code and parameters fields of the text field `text`, from the coded form stored beside
 * its English: both null when it has none (plain text, or stored before texts were coded).
 * `{ message, ...codedFields('message', event.messageCoded) }`.
 */
export function codedFields<T extends string>(text: T, coded: Message | null | undefined): CodedFields<T> {
  // The two keys are built from `text`, which is what the mapped type says; TypeScript cannot follow computed keys.
  return { [`${text}Code`]: coded?.code ?? null, [`${text}Params`]: coded?.params ?? null } as CodedFields<T>;
}
