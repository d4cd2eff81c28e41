import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { SystemClock, type Clock } from '@ccos/shared/util-timing';
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
  /**
   * Paces retries and renewals and measures lease expiry (on this candidate's own clock, never the
   * holder's timestamps); tests pass a virtual one. Default: the process's clock. Each request's
   * own deadline is real time: it bounds I/O, which a virtual clock does not see.
   */
  clock?: Clock;
  /** Source of the retry jitter, in [0, 1). Default Math.random. */
  random?(): number;
}

/**
 * What a candidate is doing: `competing` (trying to acquire every jittered retry period),
 * `leading` (renewing every retry period until it stops or misses the renew deadline, then back
 * to competing), `stopped`.
 */
export type LeaderElectionPhase = 'competing' | 'leading' | 'stopped';

/** A running candidate. */
export interface LeaderElector {
  readonly isLeader: boolean;
  /** The holder last observed, or null. */
  readonly leader: string | null;
  /** Stops the candidate; a leader stops leading (and releases the lease unless releaseOnStop is false). */
  stop(): Promise<void>;
}

const JITTER_FACTOR = 1.2;

/** A lease's record as a candidate last saw it. */
interface LeaseRecord {
  holder: string;
  durationSeconds: number;
  renewTime: string;
}

function micro(value: unknown): string {
  return value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : '';
}

/**
 * What a candidate knows of the lease, and when (on its own monotonic clock) it first saw the
 * current record: client-go never trusts the holder's timestamps, so a lease counts as expired
 * only once it has looked the same for its whole duration here.
 */
export class LeaseObservation {
  private record: (LeaseRecord & { seenAt: number }) | null = null;
  private observedLeader: string | null = null;

  /** The holder last observed, or null. */
  get leader(): string | null {
    return this.observedLeader;
  }

  /** Takes in a lease as read or written; returns the new leader when it changed (null otherwise). */
  observe(lease: V1Lease, nowMs: number): string | null {
    const spec = lease.spec ?? {};
    const record: LeaseRecord = { holder: spec.holderIdentity ?? '', durationSeconds: spec.leaseDurationSeconds ?? 0, renewTime: micro(spec.renewTime) };
    const seen = this.record;
    if (!seen || seen.holder !== record.holder || seen.renewTime !== record.renewTime || seen.durationSeconds !== record.durationSeconds) {
      this.record = { ...record, seenAt: nowMs };
    }
    if (record.holder === (this.observedLeader ?? '')) {
      return null;
    }
    this.observedLeader = record.holder || null;
    return this.observedLeader;
  }

  /** True while someone other than `identity` holds a lease that has not expired by this candidate's clock. */
  heldByOther(identity: string, nowMs: number): boolean {
    const record = this.record;
    return record !== null && record.holder !== '' && record.holder !== identity && record.seenAt + record.durationSeconds * 1000 > nowMs;
  }

  /** True when the last observed record names `identity` as holder. */
  heldBy(identity: string): boolean {
    return this.record?.holder === identity;
  }
}

/** The lease after `identity` acquired it (a takeover counts a transition) or renewed it (keeps its acquireTime). */
export function claimedLease(lease: V1Lease, identity: string, durationSeconds: number, stamp: V1MicroTime, renewing: boolean): V1Lease {
  return {
    ...lease,
    spec: {
      ...lease.spec,
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: stamp,
      acquireTime: renewing && lease.spec?.acquireTime ? lease.spec.acquireTime : stamp,
      leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (renewing ? 0 : 1),
    },
  };
}

/** The lease given up: no holder, and a one-second duration so that nobody waits on it. */
export function releasedLease(lease: V1Lease, stamp: V1MicroTime): V1Lease {
  return { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: stamp, acquireTime: stamp } };
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
  const election = new LeaderElection(client, options);
  election.start();
  return election;
}

/** One candidate: a method per {@link LeaderElectionPhase}, and the single attempt both phases make. */
export class LeaderElection implements LeaderElector {
  private readonly leaseDuration: number;
  private readonly renewDeadline: number;
  private readonly retryPeriod: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  private readonly observation = new LeaseObservation();
  private currentPhase: LeaderElectionPhase = 'competing';
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.leaseDuration = Math.round((options.leaseDurationSeconds ?? 15) * 1000);
    this.renewDeadline = Math.round((options.renewDeadlineSeconds ?? 10) * 1000);
    this.retryPeriod = Math.round((options.retryPeriodSeconds ?? 2) * 1000);
    if (!(this.leaseDuration > this.renewDeadline && this.renewDeadline > this.retryPeriod * JITTER_FACTOR && this.retryPeriod > 0)) {
      throw new Error('leader election needs leaseDurationSeconds > renewDeadlineSeconds > 1.2 × retryPeriodSeconds > 0');
    }
    this.clock = options.clock ?? new SystemClock();
    this.random = options.random ?? Math.random;
  }

  get phase(): LeaderElectionPhase {
    return this.currentPhase;
  }

  get isLeader(): boolean {
    return this.currentPhase === 'leading';
  }

  get leader(): string | null {
    return this.observation.leader;
  }

  start(): void {
    this.running = this.run().catch((error: unknown) => this.reportError(error));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      if (await this.compete()) {
        await this.lead();
      }
    }
    this.currentPhase = 'stopped';
  }

  /** `competing`: one attempt; true when it acquired the lease, else after a jittered retry period. */
  private async compete(): Promise<boolean> {
    this.currentPhase = 'competing';
    if (await this.attempt(this.now() + this.renewDeadline)) {
      return true;
    }
    await this.sleep(this.retryPeriod * (1 + this.random() * (JITTER_FACTOR - 1)));
    return false;
  }

  /** `leading`: renews every retry period; steps down when stopped or past the renew deadline. */
  private async lead(): Promise<void> {
    this.currentPhase = 'leading';
    const session = new AbortController();
    let lastRenew = this.now();
    try {
      await this.options.onStartedLeading(session.signal);
    } catch (error) {
      this.reportError(error);
    }
    while (!this.stopping.signal.aborted) {
      await this.sleep(this.retryPeriod);
      if (this.stopping.signal.aborted || !(await this.renewBefore(lastRenew + this.renewDeadline))) {
        break;
      }
      lastRenew = this.now();
    }
    await this.stepDown(session);
  }

  /** Retries within the renew deadline; false once it has passed (or on stop), so the leader steps down before the lease can expire for others. */
  private async renewBefore(deadline: number): Promise<boolean> {
    while (!this.stopping.signal.aborted && this.now() < deadline) {
      if (await this.attempt(deadline)) {
        return true;
      }
      if (this.now() < deadline) {
        await this.sleep(Math.min(this.retryPeriod, Math.max(0, deadline - this.now())));
      }
    }
    return false;
  }

  private async stepDown(session: AbortController): Promise<void> {
    this.currentPhase = this.stopping.signal.aborted ? 'stopped' : 'competing';
    session.abort();
    // Told before the lease is released, so nobody else can have started leading yet.
    try {
      this.options.onStoppedLeading?.();
    } catch (error) {
      this.reportError(error);
    }
    if (this.stopping.signal.aborted && (this.options.releaseOnStop ?? true)) {
      await this.release();
    }
  }

  /** One acquire-or-renew before `deadlineMs`; true when this candidate holds the lease afterwards. */
  private async attempt(deadlineMs: number): Promise<boolean> {
    try {
      const remaining = Math.max(1, Math.ceil(deadlineMs - this.now()));
      return await this.tryAcquireOrRenew(AbortSignal.any([this.stopping.signal, AbortSignal.timeout(remaining)]));
    } catch (error) {
      if (!this.stopping.signal.aborted && !isStatus(error, 409)) {
        this.reportError(error);
      }
      return false;
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { client } = this;
    const { namespace, name, identity } = this.options;
    const stamp = new V1MicroTime(this.clock.now());
    const durationSeconds = Math.ceil(this.leaseDuration / 1000);
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
      this.observe(created);
      return true;
    }
    this.observe(lease);
    if (this.observation.heldByOther(identity, this.now())) {
      return false;
    }
    const body = claimedLease(lease, identity, durationSeconds, stamp, this.observation.heldBy(identity));
    // metadata.resourceVersion from the read makes this a compare-and-swap: 409 if anyone wrote since.
    const updated = await client.call(`update lease ${namespace}/${name}`, (callOptions) => client.coordination.replaceNamespacedLease({ name, namespace, body }, callOptions), signal);
    this.observe(updated);
    return true;
  }

  private async release(): Promise<void> {
    const { client } = this;
    const { namespace, name, identity } = this.options;
    try {
      const lease = await client.call(`read lease ${namespace}/${name}`, (callOptions) => client.coordination.readNamespacedLease({ name, namespace }, callOptions), AbortSignal.timeout(this.renewDeadline));
      if (lease.spec?.holderIdentity !== identity) {
        return;
      }
      const body = releasedLease(lease, new V1MicroTime(this.clock.now()));
      await client.call(`release lease ${namespace}/${name}`, (callOptions) => client.coordination.replaceNamespacedLease({ name, namespace, body }, callOptions), AbortSignal.timeout(this.renewDeadline));
    } catch (error) {
      this.reportError(error);
    }
  }

  private observe(lease: V1Lease): void {
    const newLeader = this.observation.observe(lease, this.now());
    if (newLeader !== null) {
      this.options.onNewLeader?.(newLeader);
    }
  }

  private now(): number {
    return this.clock.monotonic();
  }

  private sleep(ms: number): Promise<void> {
    return this.clock.sleep(ms, this.stopping.signal);
  }

  private reportError(error: unknown): void {
    this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}
