import type { InstallProgressSubscription, NodeListQuery, NodeQuery } from '@ccos/shared/api-schema';

/** A node as the node list shows it (the NodeRowFields fragment; mutations and nodeChanged give more, NodeFields). */
export type NodeSummary = NodeListQuery['nodes'][number];

/** A node with its host facts and install runs, as its page shows it. */
export type NodeDetail = NodeQuery['node'];

/** An install run without its events (the InstallRunFields fragment). */
export type InstallRunView = NodeDetail['installRuns'][number];

/** One event the agent reported (the StepEventFields fragment). */
export type StepEventView = InstallProgressSubscription['installProgress']['events'][number];

export function byHostname(a: { readonly hostname: string }, b: { readonly hostname: string }): number {
  return a.hostname.localeCompare(b.hostname);
}

/** Adds `events` to `known` (sorted by seq); a re-sent event (same seq) replaces nothing. */
export function mergeEvents(known: readonly StepEventView[], events: readonly StepEventView[]): readonly StepEventView[] {
  if (events.length === 0) {
    return known;
  }
  const seen = new Set(known.map((event) => event.seq));
  const fresh = events.filter((event) => !seen.has(event.seq));
  if (fresh.length === 0) {
    return known;
  }
  return [...known, ...fresh].sort((a, b) => a.seq - b.seq);
}
