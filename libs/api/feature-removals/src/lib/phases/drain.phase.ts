import type { RemovalBlockingPod } from '@ccos/api/data-access-db';
import { type DrainEvent, type DrainFailure, type DrainResult, drainDeadNode, drainNode } from '@ccos/api/data-access-kube';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';
import type { ClusterAccess, RemovalObserver } from '../removal-ports';
import { errorText, NEXT, type RemovalPhaseContext, type RemovalPhaseHandler, type RemovalPhaseResult } from './removal-phase';

/** The two drains of data-access-kube: kubectl's (through the Eviction API) and the one of a dead node (deleting at once). */
export interface Drains {
  readonly graceful: typeof drainNode;
  readonly ungraceful: typeof drainDeadNode;
}

export const KUBE_DRAINS: Drains = { graceful: drainNode, ungraceful: drainDeadNode };

export interface DrainPorts {
  readonly clusters: Pick<ClusterAccess, 'watch'>;
  readonly drains: Drains;
  /** Paces the drain's timeout and eviction retries, and dates a block. */
  readonly clock: Clock;
  /** Wait before retrying an eviction a PodDisruptionBudget refused; the drain's default (5 s, like kubectl) when undefined. */
  readonly evictionRetryMs?: number;
  readonly observer?: Pick<RemovalObserver, 'evictionRefused'>;
}

const MAX_NAMED_PODS = 10;

/** `ns/pod` (PodDisruptionBudget ns/budget: message), for the node's status reason. */
function describeBlocking(blocking: readonly RemovalBlockingPod[]): Message {
  const named = blocking.slice(0, MAX_NAMED_PODS).map((entry) => {
    const namespace = entry.pod.split('/')[0];
    const said = entry.messageCoded ?? bare(message('drain.raw', { text: entry.message }));
    return bare(entry.pdb ? message('drain.blockingPodBudget', { pod: entry.pod, budget: `${namespace}/${entry.pdb}`, message: said }) : message('drain.blockingPod', { pod: entry.pod, message: said }));
  });
  const list = bare(message('common.list', { items: named }));
  return blocking.length > MAX_NAMED_PODS ? bare(message('drain.andMore', { items: list, count: blocking.length - MAX_NAMED_PODS })) : list;
}

/** Ends the run at the drain: a DRAIN_FAILED event naming what blocked; the node stays cordoned, the Node is kept. */
function drainStopped(ctx: RemovalPhaseContext, failure: DrainFailure, reason: CodedText, blocking: RemovalBlockingPod[]): RemovalPhaseResult {
  const { run } = ctx;
  const cancelled = failure === 'CANCELLED';
  const what: Message = cancelled
    ? run.reasonCoded ?? bare(message('removal.raw', { text: run.reason ?? 'cancelled' }))
    : bare(message('removal.drainNotFinished', { failure, reason: typeof reason === 'string' ? reason : bare(reason) }));
  const said = blocking.length > 0 ? message('removal.blocking', { what, pods: describeBlocking(blocking) }) : message(what.code, what.params);
  ctx.record({ kind: 'DRAIN_FAILED', message: said, detail: { failure, blocking } });
  return { outcome: cancelled ? 'CANCELLED' : 'FAILED', reason: message('removal.stopped', { what: bare(said) }), blocking };
}

/**
 * DRAIN: cordons and drains the Node like `kubectl drain` (or, ungraceful, deletes its pods at
 * once), recording each pod as it goes. The timeout counts from the start of the run, also across
 * a restart. A drain that does not finish ends the run: the node stays cordoned (DRAIN_FAILED).
 */
export class DrainPhase implements RemovalPhaseHandler {
  readonly phase = 'DRAIN' as const;

  constructor(private readonly ports: DrainPorts) {}

  async run(ctx: RemovalPhaseContext): Promise<RemovalPhaseResult> {
    const { run } = ctx;
    if (run.cancelRequested) {
      // Cancelled while no replica executed it: this replica resumed it with the flag set.
      return drainStopped(ctx, 'CANCELLED', message('removal.drainCancelled'), []);
    }
    const { options } = run;
    let client;
    try {
      client = (await this.ports.clusters.watch(run.clusterId)).client;
    } catch (error) {
      return drainStopped(ctx, 'API_ERROR', message('removal.clusterUnreachable', { error: errorText(error) }), []);
    }
    const elapsedSeconds = (this.ports.clock.now() - run.startedAt.getTime()) / 1000;
    const timeoutSeconds = options.timeoutSeconds > 0 ? Math.max(1, Math.ceil(options.timeoutSeconds - elapsedSeconds)) : 0;
    const onEvent = this.listener(ctx, options.ungraceful);
    const { signal } = ctx;
    const result: DrainResult = options.ungraceful
      ? await this.ports.drains.ungraceful(client, run.nodeName, { force: options.force, deleteEmptyDirData: options.deleteEmptyDirData, ignoreDaemonSets: options.ignoreDaemonSets, signal }, onEvent)
      : await this.ports.drains
          .graceful(
            client,
            run.nodeName,
            {
              force: options.force,
              deleteEmptyDirData: options.deleteEmptyDirData,
              ignoreDaemonSets: options.ignoreDaemonSets,
              gracePeriodSeconds: options.gracePeriodSeconds,
              timeoutSeconds,
              retryIntervalMs: this.ports.evictionRetryMs,
              signal,
              clock: this.ports.clock,
              bypassBudgets: ctx.forceDrainSignal,
            },
            onEvent,
          )
          .finally(() => {
            ctx.heldByBudgets(null);
            void ctx.blockedBy(null);
          });
    if (ctx.interrupted()) {
      return { outcome: 'INTERRUPTED' };
    }
    if (result.ok) {
      ctx.record({
        kind: 'DRAIN_FINISHED',
        message: message('removal.event.drained', { count: result.evicted.length, ungraceful: options.ungraceful, skipped: result.skipped.length }),
        detail: { evicted: result.evicted.length, skipped: result.skipped.length },
      });
      return NEXT;
    }
    if (result.failure === 'NODE_NOT_FOUND') {
      ctx.record({ kind: 'DRAIN_FINISHED', message: message('removal.event.nodeGone', { node: run.nodeName }) });
      return { outcome: 'NEXT', nodeGone: true };
    }
    return drainStopped(ctx, ctx.cancelled() ? 'CANCELLED' : result.failure, { ...result.reasonCoded, message: result.reason }, result.blocking);
  }

  /** Records drain events: pods evicted, deleted, skipped, and each new reason a pod is blocked. */
  private listener(ctx: RemovalPhaseContext, ungraceful: boolean): (event: DrainEvent) => void {
    const lastBlock = new Map<string, string>();
    let blockedSince: number | null = null;
    return (event) => {
      switch (event.type) {
        case 'cordoned':
          ctx.record({ kind: 'CORDONED', message: message(event.alreadyCordoned ? 'removal.event.alreadyCordoned' : 'removal.event.cordoned', { node: event.node }) });
          break;
        case 'pod-skipped':
          ctx.record({ kind: 'POD_SKIPPED', pod: event.pod, message: { ...event.reasonCoded, message: event.reason } });
          break;
        case 'pod-blocked': {
          blockedSince ??= this.ports.clock.now();
          ctx.heldByBudgets(blockedSince);
          this.ports.observer?.evictionRefused(ctx.run.clusterId);
          // The Eviction API is asked again every few seconds: record a block once per reason.
          const key = `${event.pdb ?? ''}|${event.message}|${event.detail ?? ''}`;
          if (lastBlock.get(event.pod) !== key) {
            lastBlock.set(event.pod, key);
            if (event.pdb) {
              void ctx.blockedBy(bare(message('removal.blocker.budget', { pdb: `${event.pod.split('/')[0]}/${event.pdb}`, pod: event.pod })), blockedSince);
            }
            ctx.record({
              kind: 'POD_BLOCKED',
              pod: event.pod,
              pdb: event.pdb,
              message: { ...event.coded, message: [event.message, event.detail].filter(Boolean).join(' ') },
              detail: { retryInMs: event.retryInMs, ...(event.detail ? { cause: event.detail } : {}) },
            });
          }
          break;
        }
        case 'pod-evicted':
          blockedSince = null;
          ctx.heldByBudgets(null);
          void ctx.blockedBy(null);
          lastBlock.delete(event.pod);
          ctx.record({ kind: 'POD_EVICTED', pod: event.pod, message: message('removal.event.podEvicted') });
          break;
        case 'pod-deleted-past-budget': {
          const decision = ctx.forceDrain();
          blockedSince = null;
          ctx.heldByBudgets(null);
          void ctx.blockedBy(null);
          lastBlock.delete(event.pod);
          ctx.record({
            kind: 'POD_FORCE_DELETED',
            pod: event.pod,
            pdb: event.pdb ?? undefined,
            message: message('removal.event.podForcedPastBudget', { pdb: event.pdb ?? '', actor: decision?.actor ?? '', reason: decision?.reason ?? '' }),
          });
          break;
        }
        case 'pod-deleted':
          ctx.record(ungraceful ? { kind: 'POD_FORCE_DELETED', pod: event.pod, message: message('removal.event.podForceDeleted') } : { kind: 'POD_DELETED', pod: event.pod, message: message('removal.event.podGone') });
          break;
        case 'pod-failed':
          ctx.record({ kind: 'POD_FAILED', pod: event.pod, message: { ...event.coded, message: event.message } });
          break;
        default:
          break;
      }
    };
  }
}
