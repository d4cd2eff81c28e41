import { checkHostname, checkIp, checkPort, checkSshUser, isIPv6 } from '@ccos/shared/domain';
import { normalizeFingerprint, type PinnedHostKey } from './host-key';

/** How to log in: one password, or one private key (PEM or OpenSSH format, optionally encrypted). */
export type SshAuth =
  | { readonly kind: 'password'; readonly password: string }
  | { readonly kind: 'privateKey'; readonly privateKey: string | Buffer; readonly passphrase?: string };

/** A host to reach over SSH and the credentials to log in with. */
export interface SshTarget {
  /** IP address or DNS name. */
  readonly host: string;
  /** Default 22. */
  readonly port?: number;
  readonly username: string;
  readonly auth: SshAuth;
  /** The host key pinned earlier; absent or null on first use (then any key is accepted and reported). */
  readonly hostKey?: PinnedHostKey | null;
  /** Run commands and installs through `sudo -n` (for a non-root user with passwordless sudo). */
  readonly sudo?: boolean;
}

/** The default SSH port. */
export const SSH_PORT = 22;

/** `user@host:port` (IPv6 in brackets) for messages and logs; never includes credentials. */
export function describeTarget(target: Pick<SshTarget, 'host' | 'port' | 'username'>): string {
  return `${target.username}@${describeEndpoint(target)}`;
}

/** `host:port` (IPv6 in brackets). */
export function describeEndpoint(target: Pick<SshTarget, 'host' | 'port'>): string {
  const host = isIPv6(target.host) ? `[${target.host}]` : target.host;
  return `${host}:${target.port ?? SSH_PORT}`;
}

/**
 * Checks a target before any connection is made, with the same rules the
 * API applies to user input; returns null when it is usable, else a message
 * that names the field (and never a secret).
 */
export function checkSshTarget(target: SshTarget): string | null {
  const hostProblem = checkIp(target.host) === null ? null : checkHostname(target.host.toLowerCase());
  if (hostProblem !== null) {
    return `host ${hostProblem.message}`;
  }
  const portProblem = checkPort(target.port ?? SSH_PORT);
  if (portProblem !== null) {
    return `port ${portProblem.message}`;
  }
  const userProblem = checkSshUser(target.username);
  if (userProblem !== null) {
    return `user ${userProblem.message}`;
  }
  if (target.auth.kind === 'password' && target.auth.password.length === 0) {
    return 'password must not be empty';
  }
  if (target.auth.kind === 'privateKey' && target.auth.privateKey.length === 0) {
    return 'private key must not be empty';
  }
  if (target.hostKey != null && normalizeFingerprint(target.hostKey.fingerprint) === null) {
    return 'pinned host key is not an OpenSSH SHA256 fingerprint (SHA256:<43 base64 characters>)';
  }
  return null;
}
