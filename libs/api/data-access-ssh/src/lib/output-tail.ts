/** Default bytes of stdout and of stderr an exec keeps: the end of the output is where failures are. */
export const DEFAULT_OUTPUT_TAIL_BYTES = 64 * 1024;

/**
 * Keeps the last `limit` bytes written to it and counts all of them, so a
 * chatty command (an rpm transaction, an agent's progress) cannot grow the
 * service's memory.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private kept = 0;
  /** Bytes written in total. */
  total = 0;

  constructor(private readonly limit = DEFAULT_OUTPUT_TAIL_BYTES) {}

  write(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.limit <= 0) {
      return;
    }
    const piece = chunk.length > this.limit ? chunk.subarray(chunk.length - this.limit) : chunk;
    this.chunks.push(piece);
    this.kept += piece.length;
    while (this.kept - (this.chunks[0]?.length ?? 0) >= this.limit) {
      this.kept -= this.chunks.shift()?.length ?? 0;
    }
  }

  /** True when earlier bytes were dropped. */
  get truncated(): boolean {
    return this.total > this.limit;
  }

  /** The kept bytes (exactly the last `limit`, or all when fewer). */
  bytes(): Buffer {
    const joined = Buffer.concat(this.chunks);
    return joined.length > this.limit ? joined.subarray(joined.length - this.limit) : joined;
  }

  /** The kept bytes as UTF-8, without a character cut in half at the start. */
  text(): string {
    let bytes = this.bytes();
    if (this.truncated) {
      let skip = 0;
      while (skip < 3 && skip < bytes.length && ((bytes[skip] ?? 0) & 0xc0) === 0x80) {
        skip += 1;
      }
      bytes = bytes.subarray(skip);
    }
    return bytes.toString('utf8');
  }
}
