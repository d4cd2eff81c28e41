import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import proxyaddr from 'proxy-addr';
import type { RequestOrigin } from '@ccos/api/util-graphql';

/**
 * Where a request came from: the peer's address, unless the peer is one of the trusted
 * proxies (TRUSTED_PROXIES), in which case X-Forwarded-For is read from the right, past
 * every trusted hop, to the first address no trusted proxy vouches for. Without trusted
 * proxies the header is ignored: anyone could write it.
 */
export function requestOrigins(trustedProxies: readonly string[], logger: Logger): (request: IncomingMessage) => RequestOrigin {
  const trust = proxyaddr.compile([...trustedProxies]);
  let warned = false;
  return (request) => {
    const peer = plainAddress(request.socket.remoteAddress ?? '');
    let address = peer;
    if (trustedProxies.length > 0) {
      const forwarded = plainAddress(proxyaddr(request, trust));
      address = isIP(forwarded) ? forwarded : peer;
    } else if (request.headers['x-forwarded-for'] && !warned) {
      warned = true;
      logger.warn({ peer }, 'ignoring X-Forwarded-For from a peer that is not a trusted proxy; behind a reverse proxy, set TRUSTED_PROXIES so sign-in throttling sees client addresses');
    }
    const agent = request.headers['user-agent'];
    return { address: address || 'unknown', userAgent: typeof agent === 'string' ? agent : null };
  };
}

/** `::ffff:10.0.0.5` is 10.0.0.5: one client, one key, whichever socket family it came in on. */
function plainAddress(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}
