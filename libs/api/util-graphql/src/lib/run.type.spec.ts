import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { runEventFields, runFields } from './run.type';

describe('run fields', () => {
  const at = new Date('2026-12-01T10:00:00Z');
  const coded = message('removal.event.podEvicted');

  it.each([
    { what: 'a coded text', stored: { message: coded.message, messageCoded: { code: coded.code, params: coded.params } }, codes: { messageCode: coded.code, messageParams: coded.params } },
    { what: 'plain text', stored: { message: 'kubectl said no', messageCoded: null }, codes: { messageCode: null, messageParams: null } },
    { what: 'no text', stored: { message: null, messageCoded: null }, codes: { messageCode: null, messageParams: null } },
  ])('maps a stored event with $what to the RunEvent fields only, whatever else its row holds', ({ stored, codes }) => {
    const row = { id: '7', runId: 'r', receivedAt: at, kind: 'POD_EVICTED', seq: 3, ...stored, detail: { pod: 'shop/web' }, occurredAt: at };
    expect(runEventFields(row)).toEqual({ seq: 3, message: stored.message, ...codes, detail: { pod: 'shop/web' }, occurredAt: at });
  });

  it('maps a stored run to the Run header with the seq of its last event', () => {
    const run = { id: 'r', nodeId: 'n', status: 'FAILED', reason: 'no room', reasonCoded: null, requestedBy: 'operator', startedAt: at, finishedAt: null, owner: 'api-1#1' };
    expect(runFields(run, 12)).toEqual({ id: 'r', nodeId: 'n', reason: 'no room', reasonCode: null, reasonParams: null, requestedBy: 'operator', startedAt: at, finishedAt: null, lastSeq: 12 });
  });
});
