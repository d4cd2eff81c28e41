import { createHash } from 'node:crypto';

/** A server host key as the connection saw it. */
export interface HostKeyInfo {
  /** OpenSSH's form: `SHA256:` + unpadded base64 of the SHA-256 of the key blob, as `ssh-keygen -lf` prints. */
  readonly fingerprint: string;
  /** The key type named in the blob: `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, ... */
  readonly algorithm: string;
}

/**
 * A host key pinned on first use. With `algorithm` set, later connections ask
 * the server for that key type only, so a client library that changes its
 * preference order cannot make a healthy host look re-keyed.
 */
export interface PinnedHostKey {
  readonly fingerprint: string;
  readonly algorithm?: string;
}

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

/**
 * Fingerprint and type of a raw SSH public key blob (RFC 4253 §6.6: a
 * length-prefixed type name, then the key data), which is what ssh2's
 * `hostVerifier` receives.
 *
 * @see https://man.openbsd.org/ssh-keygen#l
 */
export function describeHostKey(blob: Buffer): HostKeyInfo {
  return { fingerprint: fingerprintOfKeyBlob(blob), algorithm: keyTypeOfBlob(blob) };
}

/** `SHA256:<base64, no padding>` of a key blob. */
export function fingerprintOfKeyBlob(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The type name at the start of a key blob, or `unknown` for a blob too short to hold one. */
export function keyTypeOfBlob(blob: Buffer): string {
  if (blob.length < 4) {
    return 'unknown';
  }
  const length = blob.readUInt32BE(0);
  if (length === 0 || length > 64 || blob.length < 4 + length) {
    return 'unknown';
  }
  return blob.subarray(4, 4 + length).toString('latin1');
}

/**
 * Canonical form of a user-supplied fingerprint (trims, accepts the padded
 * base64 some tools print), or null when it is not an OpenSSH SHA256
 * fingerprint. MD5 fingerprints are refused on purpose: too weak to pin.
 */
export function normalizeFingerprint(value: string): string | null {
  const trimmed = value.trim();
  return FINGERPRINT.test(trimmed) ? trimmed.replace(/=$/, '') : null;
}

/** True when two fingerprints name the same key (padding and surrounding blanks ignored). */
export function sameFingerprint(a: string, b: string): boolean {
  const left = normalizeFingerprint(a);
  return left !== null && left === normalizeFingerprint(b);
}

/**
 * The host key algorithms to offer when a key of `keyType` is pinned. An RSA
 * key may be negotiated under any of its signature algorithms; other types
 * name exactly one.
 */
export function hostKeyAlgorithmsFor(keyType: string): string[] {
  return keyType === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [keyType];
}
