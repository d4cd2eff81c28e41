import type { NodeEntity, NodeStore, RemovalDecision } from '@ccos/api/data-access-db';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';
import type { RemovalPhaseContext } from './removal-phase';

/** What the host-side phases need to wait for a host. */
export interface HostWaitPorts {
  readonly clock: Clock;
  /** How long a host-side phase waits for a host that does not answer before the run fails. Default {@link DEFAULT_HOST_WAIT_MS}. */
  readonly hostWaitMs?: number;
  readonly nodes: Pick<NodeStore, 'update'>;
}

export const DEFAULT_HOST_WAIT_MS = 10 * 60_000;
const FIRST_RETRY_MS = 5_000;
const LONGEST_RETRY_MS = 30_000;

export type HostWait<T> =
  | { readonly outcome: 'ANSWERED'; readonly value: T }
  /** An operator had the run go on without the host. */
  | { readonly outcome: 'SKIPPED'; readonly skip: RemovalDecision }
  /** The host did not answer within the wait: the run fails with `reason`. */
  | { readonly outcome: 'EXPIRED'; readonly reason: CodedText }
  /** This replica no longer executes the run. */
  | { readonly outcome: 'INTERRUPTED' };

/**
 * Runs `attempt` on the run's host until the host answers (`unreachableOf` says null), an
 * operator skips the host-side part, or the wait's deadline passes. While it waits the run names
 * its blocker ("host … unreachable since …") and asks again with a growing pause (5 s to 30 s).
 */
export async function untilHostAnswers<T>(
  ctx: RemovalPhaseContext,
  ports: HostWaitPorts,
  host: string,
  attempt: (signal: AbortSignal) => Promise<T>,
  unreachableOf: (value: T) => CodedText | null,
): Promise<HostWait<T>> {
  const waitMs = ports.hostWaitMs ?? DEFAULT_HOST_WAIT_MS;
  const minutes = Math.max(1, Math.round(waitMs / 60_000));
  let since: number | null = null;
  let retryMs = FIRST_RETRY_MS;
  for (;;) {
    const skip = ctx.hostSkip();
    if (skip) {
      await ctx.blockedBy(null);
      return { outcome: 'SKIPPED', skip };
    }
    const value = await attempt(ctx.hostSkipSignal);
    if (ctx.interrupted()) {
      return { outcome: 'INTERRUPTED' };
    }
    const problem = unreachableOf(value);
    const skipped = ctx.hostSkip();
    if (problem && skipped) {
      await ctx.blockedBy(null);
      return { outcome: 'SKIPPED', skip: skipped };
    }
    if (!problem) {
      await ctx.blockedBy(null);
      return { outcome: 'ANSWERED', value };
    }
    const now = ports.clock.now();
    if (since === null) {
      since = now;
      ctx.record({ kind: 'HOST_WAITING', message: message('removal.event.hostWaiting', { host, error: bare(problem), minutes }) });
    }
    const left = since + waitMs - now;
    if (left <= 0) {
      await ctx.blockedBy(null);
      return { outcome: 'EXPIRED', reason: message('removal.hostWaitExpired', { host, minutes, error: bare(problem) }) };
    }
    await ctx.blockedBy(bare(message('removal.blocker.hostUnreachable', { host, since, error: bare(problem) })), since);
    await ports.clock.sleep(Math.min(retryMs, left), ctx.hostSkipSignal);
    if (ctx.interrupted()) {
      return { outcome: 'INTERRUPTED' };
    }
    retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
  }
}

/** Records that the run goes on without the host, and marks the node reinstall required (once per node). */
export async function leaveHostAsItIs(ctx: RemovalPhaseContext, ports: HostWaitPorts, node: NodeEntity, skip: RemovalDecision): Promise<void> {
  if (node.reinstallRequired) {
    return;
  }
  ctx.record({ kind: 'HOST_SKIPPED', message: message('removal.event.hostSkipped', { actor: skip.actor, reason: skip.reason }) });
  await ports.nodes.update(node.id, { reinstallRequired: bare(message('node.reinstallRequired.hostSkipped', { actor: skip.actor, reason: skip.reason })) });
}
