import { describe, expect, it } from 'vitest';
import { removalEvent, stepEvent } from '../../testing';
import { type SequencedEvent, eventsByGroup, mergeRunEvents } from './run-events';

const seqs = (events: readonly { readonly seq: number }[]) => events.map((event) => event.seq);

// The same cases for both kinds of run: the merge looks at nothing but seq.
const kinds: readonly { readonly kind: string; readonly event: (seq: number) => SequencedEvent & { readonly message: string | null } }[] = [
  { kind: 'install', event: (seq: number) => stepEvent(seq, 'PREFLIGHT') },
  { kind: 'removal', event: (seq: number) => removalEvent(seq, 'POD_EVICTED') },
];

describe.each(kinds)('merging arrived events into a $kind run’s log', ({ event }) => {
  const events = (...numbers: number[]) => numbers.map(event);

  it.each([
    { case: 'new events after the log', log: [1, 2], arrived: [3, 4], merged: [1, 2, 3, 4] },
    { case: 'a resubscription’s replay of every event so far, with one missed meanwhile', log: [1, 2, 4], arrived: [1, 2, 3, 4], merged: [1, 2, 3, 4] },
    { case: 'an event that arrives after a later one', log: [1, 3], arrived: [2], merged: [1, 2, 3] },
    { case: 'a message out of order', log: [], arrived: [3, 1, 2], merged: [1, 2, 3] },
    { case: 'one event twice in one message', log: [1], arrived: [2, 2, 1], merged: [1, 2] },
    { case: 'nothing', log: [1], arrived: [], merged: [1] },
  ])('takes $case in seq order, each once', ({ log, arrived, merged }) => {
    expect(seqs(mergeRunEvents(events(...log), events(...arrived)))).toEqual(merged);
  });

  it('keeps the log itself when nothing is new, and takes an ordered first message as it is', () => {
    const log = events(1, 2, 3);
    expect(mergeRunEvents(log, events(2, 3))).toBe(log);
    const first = events(1, 2);
    expect(mergeRunEvents([], first)).toBe(first);
  });

  it('keeps the event it had when one arrives again', () => {
    const known = { ...event(1), message: 'as first seen' };
    expect(mergeRunEvents([known], [{ ...event(1), message: 'again' }, event(2)])[0]).toBe(known);
  });
});

describe('a run’s events under their steps or phases', () => {
  it('groups them in the log’s order, leaving out those of none', () => {
    const events = [removalEvent(1, 'STARTED'), removalEvent(2, 'KUBELET_STOPPED'), removalEvent(3, 'FINISHED'), removalEvent(4, 'KUBELET_NOT_STOPPED')];
    const groups = eventsByGroup(events, (event) => (event.kind === 'FINISHED' ? null : event.kind.startsWith('KUBELET') ? 'STOP_KUBELET' : 'DRAIN'));
    expect([...groups.keys()]).toEqual(['DRAIN', 'STOP_KUBELET']);
    expect(seqs(groups.get('STOP_KUBELET') ?? [])).toEqual([2, 4]);
    expect(eventsByGroup([stepEvent(1, 'PREFLIGHT'), stepEvent(2, 'DOWNLOAD_BINARIES'), stepEvent(3, 'PREFLIGHT')], (event) => event.step).get('PREFLIGHT')?.map((event) => event.seq)).toEqual([1, 3]);
  });
});
