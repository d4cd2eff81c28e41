import { GraphQLJSONObject } from 'graphql-scalars';
import { Field } from 'type-graphql';

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
