import { SignJWT, jwtVerify } from 'jose';

export interface SessionClaims {
  readonly userId: string;
  /** The row in user_sessions; revoking it ends the token however long it has left. */
  readonly sessionId: string;
}

const ISSUER = 'ccos-scaler';
const AUDIENCE = 'ccos-scaler-api';

/**
 * Signed, expiring bearer tokens for signed-in users (HS256 with a key derived from SECRET_KEY).
 * A token names its user and session only; the role and whether the session still stands
 * come from the database.
 */
export class SessionTokens {
  constructor(
    private readonly signingKey: Uint8Array,
    readonly lifetimeSeconds: number,
  ) {}

  async issue(claims: SessionClaims, expiresAt: Date): Promise<string> {
    return new SignJWT({ sid: claims.sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.signingKey);
  }

  /** The claims of a valid token and when it expires, or null for anything forged, expired or malformed. */
  async verify(token: string): Promise<(SessionClaims & { readonly expiresAt: Date }) | null> {
    try {
      const { payload } = await jwtVerify(token, this.signingKey, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      const sessionId = payload['sid'];
      if (!payload.sub || typeof sessionId !== 'string' || !UUID.test(sessionId) || !UUID.test(payload.sub) || payload.exp === undefined) {
        return null;
      }
      return { userId: payload.sub, sessionId, expiresAt: new Date(payload.exp * 1000) };
    } catch {
      return null;
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
