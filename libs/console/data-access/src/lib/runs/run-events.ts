/** One entry of a run's event log: the API numbers a run's events 1, 2, 3 … in the order they happened. */
export interface SequencedEvent {
  readonly seq: number;
}

/**
 * Adds `arrived` to a run's `log`, in seq order, each seq once. A resubscription's first
 * message repeats every event so far, and an event can arrive after a later one (a query's
 * answer overtaken by the subscription): by seq, both land where they belong. Returns `log`
 * itself when nothing is new (or `arrived` when the log was empty and it is already in
 * order), so a signal holding the log does not change for nothing.
 */
export function mergeRunEvents<E extends SequencedEvent>(log: readonly E[], arrived: readonly E[]): readonly E[] {
  if (log.length === 0 && isInOrder(arrived)) {
    return arrived;
  }
  const seen = new Set(log.map((event) => event.seq));
  const fresh: E[] = [];
  for (const event of arrived) {
    if (!seen.has(event.seq)) {
      seen.add(event.seq);
      fresh.push(event);
    }
  }
  return fresh.length === 0 ? log : [...log, ...fresh].sort((a, b) => a.seq - b.seq);
}

/**
 * The log's events under the step or phase each belongs to (`groupOf` answers null for
 * those of none), each group in the log's order.
 */
export function eventsByGroup<E, G>(events: readonly E[], groupOf: (event: E) => G | null): ReadonlyMap<G, readonly E[]> {
  const groups = new Map<G, E[]>();
  for (const event of events) {
    const group = groupOf(event);
    if (group === null) {
      continue;
    }
    const members = groups.get(group);
    if (members) {
      members.push(event);
    } else {
      groups.set(group, [event]);
    }
  }
  return groups;
}

/** Strictly ascending seqs: sorted and without repeats. */
function isInOrder(events: readonly SequencedEvent[]): boolean {
  return events.every((event, index) => index === 0 || events[index - 1].seq < event.seq);
}
