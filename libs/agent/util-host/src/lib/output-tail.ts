/** The most the agent puts into one event's `detail.outputTail`. */
export const OUTPUT_TAIL_BYTES = 4096;

/**
 * The last `maxBytes` bytes of a text, cut at a line start when one is near
 * and never inside a UTF-8 sequence, marked with a leading `…` when cut.
 */
export function tailText(text: string, maxBytes = OUTPUT_TAIL_BYTES): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) {
    return text;
  }
  let start = bytes.length - (maxBytes - 3);
  // Skip UTF-8 continuation bytes so the tail starts on a character.
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) {
    start += 1;
  }
  let tail = bytes.subarray(start).toString('utf8');
  const newline = tail.indexOf('\n');
  if (newline >= 0 && newline < 200) {
    tail = tail.slice(newline + 1);
  }
  return `…${tail}`;
}

/** The first `maxBytes` bytes of a buffer as text (invalid sequences become U+FFFD). */
export function headText(bytes: Uint8Array, maxBytes: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, maxBytes)).toString('utf8');
}

/** A value quoted for a one-line message: control characters escaped, shortened. */
export function quoteForMessage(value: string, max = 120): string {
  const visible = JSON.stringify(value);
  return visible.length > max ? `${visible.slice(0, max - 2)}…"` : visible;
}
