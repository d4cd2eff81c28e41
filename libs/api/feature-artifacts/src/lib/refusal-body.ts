import type { CodedText } from '@ccos/shared/messages';

/** The JSON body of a refused artifact request: the English `error` as before, with its message code and parameters beside it for clients that word it. */
export function refusalBody(text: CodedText): { readonly error: string; readonly messageCode: string; readonly messageParams: CodedText['params'] } {
  return { error: text.message, messageCode: text.code, messageParams: text.params };
}
