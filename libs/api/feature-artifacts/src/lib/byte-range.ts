/** An inclusive byte range of a file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Parses a single-range `Range` header (`bytes=a-b`, `bytes=a-`, `bytes=-n`) against a file
 * of `size` bytes: null when absent or not a single byte range (the whole file is sent),
 * 'unsatisfiable' when it lies outside the file (416).
 * @see https://www.rfc-editor.org/rfc/rfc9110#name-range
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) {
    return null;
  }
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) {
    return 'unsatisfiable';
  }
  return { start, end };
}
