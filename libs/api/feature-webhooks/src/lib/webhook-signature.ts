import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries a delivery's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'x-signature';

/** The signature of `body` sent at `timestampSeconds` with the endpoint's secret, as the header carries it. */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/**
 * What a receiver checks: the signature matches the body and the secret, and was made within
 * `toleranceSeconds` of `nowSeconds` (a replayed old delivery is refused).
 */
export function verifyWebhook(secret: string, header: string | undefined, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const fields = new Map((header ?? '').split(',').map((part) => part.split('=', 2) as [string, string]));
  const timestamp = Number(fields.get('t'));
  const given = Buffer.from(fields.get('v1') ?? '', 'hex');
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    return false;
  }
  const expected = Buffer.from(signWebhook(secret, timestamp, body).split('v1=')[1] ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
