import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { codedFields } from './message-code-fields';

describe('codedFields', () => {
  it.each([
    { text: 'message', coded: { code: message('node.connecting').code, params: {} }, expected: { messageCode: 'node.connecting', messageParams: {} } },
    { text: 'reason', coded: null, expected: { reasonCode: null, reasonParams: null } },
    { text: 'nodeStatusReason', coded: undefined, expected: { nodeStatusReasonCode: null, nodeStatusReasonParams: null } },
  ])('names the $text fields after the text', ({ text, coded, expected }) => {
    expect(codedFields(text, coded)).toEqual(expected);
  });
});
