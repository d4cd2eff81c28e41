import { setTimeout as sleep } from 'node:timers/promises';

/**
 * When kubelet's certificate manager rotates a certificate: at a random point between 70 % and
 * 90 % of its validity (`nextRotationDeadline` in client-go's certificate manager). The stand-in
 * measures that on the host's clock, from the moment it received the certificate: the lab's
 * signer and the hosts share the machine's clock, except for the jumps a test makes
 * (faults.advanceClock), which age the certificates the host holds.
 *
 * @see https://github.com/kubernetes/client-go/blob/master/util/certificate/certificate_manager.go
 */
export interface RotationPlan {
  /** Host-clock time (ms) at which to ask for a new certificate. */
  readonly deadline: number;
  readonly jitter: number;
}

/** `receivedAtHost` is the host's clock when the certificate arrived, `now` the machine's. */
export function rotationDeadline(
  validity: { readonly notBefore: Date; readonly notAfter: Date },
  receivedAtHost: number,
  now: number,
  random: () => number = Math.random,
): RotationPlan {
  const total = validity.notAfter.getTime() - validity.notBefore.getTime();
  const jitter = 0.7 + 0.2 * random();
  const aged = Math.max(0, now - validity.notBefore.getTime());
  return { deadline: receivedAtHost + total * jitter - aged, jitter };
}

/** Waits until the host clock reaches `deadline`, looking at it every second (a clock jump shows within one). */
export async function untilHostTime(deadline: number, hostNow: () => number, signal: AbortSignal): Promise<void> {
  while (hostNow() < deadline) {
    await sleep(Math.min(1000, Math.max(50, deadline - hostNow())), undefined, { signal });
  }
}
