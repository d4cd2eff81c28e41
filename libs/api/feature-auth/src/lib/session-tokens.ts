import { SignJWT, jwtVerify } from 'jose';
import { isRole, type Role } from '@ccos/shared/domain';

export interface SessionClaims {
  readonly userId: string;
  readonly username: string;
  readonly role: Role;
  /** The user's session generation when the token was issued. */
  readonly generation: number;
}

const ISSUER = 'ccos-scaler';
const AUDIENCE = 'ccos-scaler-api';

/** Signed, expiring bearer tokens for signed-in users (HS256 with a key derived from SECRET_KEY). */
export class SessionTokens {
  constructor(
    private readonly signingKey: Uint8Array,
    private readonly lifetimeSeconds: number,
  ) {}

  async issue(claims: SessionClaims): Promise<{ token: string; expiresAt: Date }> {
    const expiresAt = new Date(Date.now() + this.lifetimeSeconds * 1000);
    const token = await new SignJWT({ name: claims.username, role: claims.role, gen: claims.generation })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.signingKey);
    return { token, expiresAt };
  }

  /** The claims of a valid token and when it expires, or null for anything forged, expired or malformed. */
  async verify(token: string): Promise<(SessionClaims & { readonly expiresAt: Date }) | null> {
    try {
      const { payload } = await jwtVerify(token, this.signingKey, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      const role = String(payload['role']);
      if (!payload.sub || !isRole(role) || payload.exp === undefined) {
        return null;
      }
      return { userId: payload.sub, username: String(payload['name']), role, generation: Number(payload['gen'] ?? -1), expiresAt: new Date(payload.exp * 1000) };
    } catch {
      return null;
    }
  }
}
