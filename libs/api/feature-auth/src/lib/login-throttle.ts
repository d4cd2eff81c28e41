import { createHash } from 'node:crypto';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import type { LoginLimitStore } from '@ccos/api/data-access-db';

/** How hard password guessing is made. */
export interface LoginLimits {
  /** Failed sign-ins for one user name from one address before each further one waits. */
  readonly freeFailures: number;
  /** The wait after the last free failure; it doubles with every failure after that … */
  readonly firstLockSeconds: number;
  /** … up to this. */
  readonly maxLockSeconds: number;
  /** How long failures for a user name from an address are remembered (a success forgets them). */
  readonly failureMemorySeconds: number;
  /** Failed sign-ins from one address, whatever the user name, within `addressWindowSeconds`. */
  readonly addressFailures: number;
  readonly addressWindowSeconds: number;
  /** How long a user name that signed in from an address is remembered as known there (it goes first when checks queue up). */
  readonly knownPairSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  freeFailures: 5,
  firstLockSeconds: 15,
  maxLockSeconds: 15 * 60,
  failureMemorySeconds: 24 * 3600,
  addressFailures: 30,
  addressWindowSeconds: 10 * 60,
  knownPairSeconds: 30 * 24 * 3600,
};

/** Why an attempt has to wait: failures for this user name from this address, or from this address at all. */
export interface LoginWait {
  readonly scope: 'USER' | 'ADDRESS';
  readonly seconds: number;
}

/** What the throttle knows about an attempt before its password is checked. */
export interface LoginAssessment {
  /** Set when the attempt must wait instead. */
  readonly wait: LoginWait | null;
  /** Whether this user name has signed in from this address lately: such attempts go first when checks queue up. */
  readonly known: boolean;
}

/**
 * Slows password guessing per (user name, source address), with a wait that doubles with
 * every failure past the free ones, plus a budget of failures per address so one address
 * cannot try every user name. The counters live in Postgres (rate-limiter-flexible's store),
 * so every replica sees the same ones, and nothing grows in memory. Someone failing from
 * one address never delays the same user signing in from another.
 */
export class LoginThrottle {
  private readonly failures: RateLimiterPostgres;
  private readonly locks: RateLimiterPostgres;
  private readonly addresses: RateLimiterPostgres;
  private readonly knownPairs: RateLimiterPostgres;

  constructor(
    store: LoginLimitStore,
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
  ) {
    // The store deletes rows that expired an hour ago every five minutes on its own.
    this.failures = new RateLimiterPostgres({ ...store, keyPrefix: 'fail', points: limits.freeFailures, duration: limits.failureMemorySeconds });
    this.locks = new RateLimiterPostgres({ ...store, keyPrefix: 'lock', points: 1, duration: limits.maxLockSeconds });
    this.addresses = new RateLimiterPostgres({ ...store, keyPrefix: 'addr', points: limits.addressFailures, duration: limits.addressWindowSeconds });
    this.knownPairs = new RateLimiterPostgres({ ...store, keyPrefix: 'known', points: 1, duration: limits.knownPairSeconds });
  }

  /** Whether an attempt for `username` from `address` must wait, and whether the pair is a known one. */
  async assess(username: string, address: string): Promise<LoginAssessment> {
    const key = pairKey(username, address);
    const [lock, fromAddress, known] = await Promise.all([this.locks.get(key), this.addresses.get(addressKey(address)), this.knownPairs.get(key)]);
    return { wait: waitOf(lock, fromAddress, this.limits), known: known !== null };
  }

  /** How long an attempt for `username` from `address` must wait, or null when it may go ahead. */
  async waitFor(username: string, address: string): Promise<LoginWait | null> {
    const [lock, fromAddress] = await Promise.all([this.locks.get(pairKey(username, address)), this.addresses.get(addressKey(address))]);
    return waitOf(lock, fromAddress, this.limits);
  }

  /** Counts a wrong password; past the free failures the pair waits, twice as long each time. */
  async recordFailure(username: string, address: string): Promise<void> {
    const key = pairKey(username, address);
    const [counted] = await Promise.all([this.failures.penalty(key, 1), this.addresses.penalty(addressKey(address), 1)]);
    const beyondFree = counted.consumedPoints - this.limits.freeFailures;
    if (beyondFree >= 0) {
      const seconds = Math.min(this.limits.maxLockSeconds, this.limits.firstLockSeconds * 2 ** Math.min(beyondFree, 30));
      await this.locks.set(key, 1, seconds);
    }
  }

  /** A right password forgets the pair's failures (the address's budget stays spent) and makes the pair a known one. */
  async recordSuccess(username: string, address: string): Promise<void> {
    const key = pairKey(username, address);
    await Promise.all([this.failures.delete(key), this.locks.delete(key), this.knownPairs.set(key, 1, this.limits.knownPairSeconds)]);
  }
}

function waitOf(lock: RateLimiterRes | null, fromAddress: RateLimiterRes | null, limits: LoginLimits): LoginWait | null {
  if (fromAddress && fromAddress.consumedPoints >= limits.addressFailures && fromAddress.msBeforeNext > 0) {
    return { scope: 'ADDRESS', seconds: Math.ceil(fromAddress.msBeforeNext / 1000) };
  }
  if (lock && lock.msBeforeNext > 0) {
    return { scope: 'USER', seconds: Math.ceil(lock.msBeforeNext / 1000) };
  }
  return null;
}

/** Keys fit the store's varchar(255) whatever a caller sends as a user name (length, NUL bytes …). */
function pairKey(username: string, address: string): string {
  return `${createHash('sha256').update(username).digest('base64url')}@${addressKey(address)}`;
}

function addressKey(address: string): string {
  return address.slice(0, 64);
}
