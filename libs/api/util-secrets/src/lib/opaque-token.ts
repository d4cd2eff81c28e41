import { createHash, randomBytes } from 'node:crypto';

/** A random bearer token (e.g. a one-run agent token): hand out `token`, store only `hash`. */
export function newOpaqueToken(prefix: string): { token: string; hash: string } {
  const token = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashOpaqueToken(token) };
}

export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
