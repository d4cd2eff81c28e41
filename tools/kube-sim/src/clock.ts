/**
 * The simulator's idea of the time: every timestamp it writes (creationTimestamp, deletionTimestamp,
 * conditions, taints, certificate validity, token issue and expiry times) and every expiry it
 * judges comes from here. Tests hand it the same time source as the code under test, so
 * timestamps move only when the test moves its clock. Timers (grace periods, controller delays,
 * watch timeouts) still run on real time.
 */
export interface KubeSimClock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The machine's clock. */
export const SYSTEM_CLOCK: KubeSimClock = { now: () => Date.now() };
