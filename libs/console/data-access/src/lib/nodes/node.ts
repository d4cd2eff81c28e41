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
