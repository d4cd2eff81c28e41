import { setTimeout as delay } from 'node:timers/promises';
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { isStatus, type KubeClient } from './kube-client';

/** Settings of a leader election; the defaults are client-go's recommended ones. */
export interface LeaderElectionOptions {
  namespace: string;
  /** Name of the Lease object. */
  name: string;
  /** This candidate's identity (unique per process, e.g. pod name + random suffix). */
  identity: string;
  /** How long a lease is valid after its holder's last renewal, as seen by the others. Default 15. */
  leaseDurationSeconds?: number;
  /** The leader gives up if it could not renew for this long; must be below leaseDurationSeconds. Default 10. */
  renewDeadlineSeconds?: number;
  /** Interval between attempts to acquire or renew. Default 2. */
  retryPeriodSeconds?: number;
  /** Clear holderIdentity on stop so another candidate takes over at once. Default true. */
  releaseOnStop?: boolean;
  /** Called on becoming leader; `signal` aborts when leadership ends (lost or stopped). */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called after leadership ended (only if it had started). */
  onStoppedLeading?(): void;
  /** Called when the observed leader changes (including to ourselves). */
  onNewLeader?(identity: string): void;
  /** Failed API calls, for logging; the election carries on. */
  onError?(error: Error): void;
}

/** A running candidate. */
export interface LeaderElector {
  readonly isLeader: boolean;
  /** The holder last observed, or null. */
  readonly leader: string | null;
  /** Stops the candidate; a leader stops leading (and releases the lease unless releaseOnStop is false). */
  stop(): Promise<void>;
}

const JITTER_FACTOR = 1.2;

interface Observed {
  holder: string;
  durationSeconds: number;
  renewTime: string;
  transitions: number;
  acquireTime: string;
  /** Local monotonic time at which this record was first seen. */
  seenAt: number;
}

function micro(value: unknown): string {
  return value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : '';
}

/**
 * Leader election through a `coordination.k8s.io/v1` Lease with client-go's semantics: a candidate
 * takes the lease when it is free (no holder) or has not changed for its leaseDurationSeconds as
 * measured on the candidate's own clock, the leader renews every retry period with optimistic
 * concurrency (the read resourceVersion; a 409 means someone else wrote first), steps down if it
 * could not renew within the renew deadline, and clears holderIdentity when stopped. Because the
 * renew deadline is shorter than the lease duration, a leader that cannot renew steps down before
 * anyone else may take over. After losing the lease a candidate competes again until stopped.
 * @see https://github.com/kubernetes/client-go/blob/master/tools/leaderelection/leaderelection.go
 * @see https://kubernetes.io/docs/concepts/architecture/leases/
 */
export function startLeaderElection(client: KubeClient, options: LeaderElectionOptions): LeaderElector {
  const leaseDuration = Math.round((options.leaseDurationSeconds ?? 15) * 1000);
  const renewDeadline = Math.round((options.renewDeadlineSeconds ?? 10) * 1000);
  const retryPeriod = Math.round((options.retryPeriodSeconds ?? 2) * 1000);
  if (!(leaseDuration > renewDeadline && renewDeadline > retryPeriod * JITTER_FACTOR && retryPeriod > 0)) {
    throw new Error('leader election needs leaseDurationSeconds > renewDeadlineSeconds > 1.2 × retryPeriodSeconds > 0');
  }
  const { namespace, name, identity } = options;
  const stopping = new AbortController();
  let observed: Observed | null = null;
  let leading: AbortController | null = null;
  let leader: string | null = null;
  const reportError = (error: unknown): void => options.onError?.(error instanceof Error ? error : new Error(String(error)));
  const now = (): number => performance.now();
  const sleep = (ms: number): Promise<void> => delay(ms, undefined, { signal: stopping.signal }).catch(() => undefined);
  const jittered = (ms: number): number => ms * (1 + Math.random() * (JITTER_FACTOR - 1));

  const observe = (lease: V1Lease): void => {
    const spec = lease.spec ?? {};
    const record = {
      holder: spec.holderIdentity ?? '',
      durationSeconds: spec.leaseDurationSeconds ?? 0,
      renewTime: micro(spec.renewTime),
      transitions: spec.leaseTransitions ?? 0,
      acquireTime: micro(spec.acquireTime),
    };
    if (!observed || observed.holder !== record.holder || observed.renewTime !== record.renewTime || observed.durationSeconds !== record.durationSeconds) {
      observed = { ...record, seenAt: now() };
    }
    if (record.holder !== leader) {
      leader = record.holder || null;
      if (leader) {
        options.onNewLeader?.(leader);
      }
    }
  };

  /** One attempt; true when we hold the lease afterwards. */
  const tryAcquireOrRenew = async (signal: AbortSignal): Promise<boolean> => {
    const stamp = new V1MicroTime();
    const durationSeconds = Math.ceil(leaseDuration / 1000);
    let lease: V1Lease;
    try {
      lease = await client.call(`read lease ${namespace}/${name}`, (callOptions) => client.coordination.readNamespacedLease({ name, namespace }, callOptions), signal);
    } catch (error) {
      if (!isStatus(error, 404)) {
        throw error;
      }
      const created = await client.call(
        `create lease ${namespace}/${name}`,
        (callOptions) =>
          client.coordination.createNamespacedLease(
            { namespace, body: { metadata: { name, namespace }, spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: stamp, renewTime: stamp, leaseTransitions: 0 } } },
            callOptions,
          ),
        signal,
      );
      observe(created);
      return true;
    }
    observe(lease);
    const record = observed as Observed | null;
    const heldByOther = record !== null && record.holder !== '' && record.holder !== identity;
    if (heldByOther && record.seenAt + record.durationSeconds * 1000 > now()) {
      return false;
    }
    const ours = record?.holder === identity;
    const body: V1Lease = {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        renewTime: stamp,
        acquireTime: ours && lease.spec?.acquireTime ? lease.spec.acquireTime : stamp,
        leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (ours ? 0 : 1),
      },
    };
    // metadata.resourceVersion from the read makes this a compare-and-swap: 409 if anyone wrote since.
    const updated = await client.call(`update lease ${namespace}/${name}`, (callOptions) => client.coordination.replaceNamespacedLease({ name, namespace, body }, callOptions), signal);
    observe(updated);
    return true;
  };

  const attempt = async (deadlineMs: number): Promise<boolean> => {
    try {
      const remaining = Math.max(1, Math.ceil(deadlineMs - now()));
      return await tryAcquireOrRenew(AbortSignal.any([stopping.signal, AbortSignal.timeout(remaining)]));
    } catch (error) {
      if (!stopping.signal.aborted && !isStatus(error, 409)) {
        reportError(error);
      }
      return false;
    }
  };

  const lead = async (): Promise<void> => {
    const session = new AbortController();
    leading = session;
    let lastRenew = now();
    try {
      await options.onStartedLeading(session.signal);
    } catch (error) {
      reportError(error);
    }
    while (!stopping.signal.aborted) {
      await sleep(retryPeriod);
      if (stopping.signal.aborted) {
        break;
      }
      // Retry within the renew deadline; past it, step down before the lease can expire for others.
      let renewed = false;
      while (!renewed && !stopping.signal.aborted && now() < lastRenew + renewDeadline) {
        renewed = await attempt(lastRenew + renewDeadline);
        if (!renewed && now() < lastRenew + renewDeadline) {
          await sleep(Math.min(retryPeriod, Math.max(0, lastRenew + renewDeadline - now())));
        }
      }
      if (!renewed) {
        break;
      }
      lastRenew = now();
    }
    leading = null;
    session.abort();
    // Told before the lease is released, so nobody else can have started leading yet.
    try {
      options.onStoppedLeading?.();
    } catch (error) {
      reportError(error);
    }
    if (stopping.signal.aborted && (options.releaseOnStop ?? true)) {
      await release();
    }
  };

  const release = async (): Promise<void> => {
    try {
      const lease = await client.call(`read lease ${namespace}/${name}`, (callOptions) => client.coordination.readNamespacedLease({ name, namespace }, callOptions), AbortSignal.timeout(renewDeadline));
      if (lease.spec?.holderIdentity !== identity) {
        return;
      }
      const stamp = new V1MicroTime();
      const body: V1Lease = { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: stamp, acquireTime: stamp } };
      await client.call(`release lease ${namespace}/${name}`, (callOptions) => client.coordination.replaceNamespacedLease({ name, namespace, body }, callOptions), AbortSignal.timeout(renewDeadline));
    } catch (error) {
      reportError(error);
    }
  };

  const run = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      if (await attempt(now() + renewDeadline)) {
        await lead();
      } else {
        await sleep(jittered(retryPeriod));
      }
    }
  };

  const running = run().catch(reportError);
  return {
    get isLeader() {
      return leading !== null;
    },
    get leader() {
      return leader;
    },
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
