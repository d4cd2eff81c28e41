import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bodies up to this size are read and dropped after an answer that did not need them. */
export const DROP_UNREAD_BODY_BYTES = 1024 * 1024;

/**
 * Readies the connection for an answer sent without reading the request body (a refusal).
 *
 * A body of at most `dropBytes` declared bytes is left to Node, which reads and drops it after the
 * answer and keeps the connection for the client's next request. Anything larger, or of unknown
 * length, makes the answer the connection's last, so the rest is never pulled off the wire: a
 * refused upload costs at most `dropBytes`. Closing with body bytes unread makes TCP reset the
 * connection, and a reset can discard the answer before the client reads it, so that is kept for
 * clients that send more than `dropBytes` to a refusal.
 */
export function answerWithoutReadingBody(req: IncomingMessage, res: ServerResponse, dropBytes = DROP_UNREAD_BODY_BYTES): void {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (req.readableFlowing !== false && Number.isFinite(declared) && declared <= dropBytes) {
    return;
  }
  res.setHeader('connection', 'close');
}
