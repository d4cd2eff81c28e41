/** One member of a tar archive as the reader meets it. */
export interface TarEntry {
  /** The member's path as written in the archive (PAX `path` and GNU long names applied). */
  readonly path: string;
  readonly type: 'file' | 'directory' | 'other';
  /** The typeflag character, for messages about `other` members. */
  readonly typeflag: string;
  readonly size: number;
}

/** The bytes of one member, delivered in order; consumed or skipped before the next entry. */
export type TarContent = AsyncIterable<Buffer>;

const BLOCK = 512;

class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private readonly iterator: AsyncIterator<Uint8Array>;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** Exactly `n` bytes, or fewer only at the end of the input. */
  async read(n: number): Promise<Buffer> {
    while (this.length < n) {
      const next = await this.iterator.next();
      if (next.done) {
        break;
      }
      const chunk = Buffer.from(next.value);
      this.buffered.push(chunk);
      this.length += chunk.length;
    }
    const all = Buffer.concat(this.buffered);
    const taken = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(taken.length);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return taken;
  }

  /** Up to `max` bytes that are already here or arrive next (for streaming a member). */
  async readSome(max: number): Promise<Buffer> {
    if (this.length === 0) {
      const next = await this.iterator.next();
      if (next.done) {
        return Buffer.alloc(0);
      }
      const chunk = Buffer.from(next.value);
      this.buffered = [chunk];
      this.length = chunk.length;
    }
    return this.read(Math.min(max, this.length));
  }
}

function text(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
}

function octal(block: Buffer, start: number, length: number): number {
  const field = block.subarray(start, start + length);
  if ((field[0] ?? 0) & 0x80) {
    // GNU base-256 for sizes of 8 GiB and more.
    let value = 0;
    for (let i = 1; i < field.length; i++) {
      value = value * 256 + (field[i] ?? 0);
    }
    return value;
  }
  const digits = text(block, start, length).trim();
  if (!/^[0-7]*$/.test(digits)) {
    throw new Error(`the tar header has a malformed number ${JSON.stringify(digits)}`);
  }
  return digits === '' ? 0 : parseInt(digits, 8);
}

function checksumMatches(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) {
    sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  }
  return sum === octal(block, 148, 8);
}

/** PAX extended header records: `<len> <key>=<value>\n`. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.subarray(offset, space).toString('ascii'));
    if (space === -1 || !Number.isSafeInteger(length) || length <= 0) {
      throw new Error('the tar archive has a malformed PAX header');
    }
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}

/**
 * Reads a POSIX (ustar/PAX) or GNU tar archive as it streams in and hands each member to `visit`
 * with an iterable of its bytes; what `visit` does not consume is skipped. Links, devices and
 * other special members are reported as `other` (callers refuse them). Throws on a damaged archive.
 * @see https://pubs.opengroup.org/onlinepubs/9699919799/utilities/pax.html#tag_20_92_13_01
 */
export async function readTar(source: AsyncIterable<Uint8Array>, visit: (entry: TarEntry, content: TarContent) => Promise<void>): Promise<void> {
  const reader = new ByteReader(source);
  let longName: string | null = null;
  let paxPath: string | null = null;
  for (;;) {
    const block = await reader.read(BLOCK);
    if (block.length === 0 || block.every((byte) => byte === 0)) {
      return;
    }
    if (block.length < BLOCK || !checksumMatches(block)) {
      throw new Error('the upload is not a tar archive (or it is damaged or cut short)');
    }
    const typeflag = String.fromCharCode(block[156] ?? 0);
    const size = octal(block, 124, 12);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x' || typeflag === 'L' || typeflag === 'g') {
      const data = await reader.read(padded);
      if (data.length < padded) {
        throw new Error('the tar archive is cut short');
      }
      if (typeflag === 'x') {
        paxPath = paxRecords(data.subarray(0, size)).get('path') ?? paxPath;
      } else if (typeflag === 'L') {
        longName = data.subarray(0, size).toString('utf8').replace(/\0+$/, '');
      }
      continue;
    }
    const prefix = text(block, 257, 6).startsWith('ustar') ? text(block, 345, 155) : '';
    const name = text(block, 0, 100);
    const path = paxPath ?? longName ?? (prefix ? `${prefix}/${name}` : name);
    paxPath = null;
    longName = null;
    const type = typeflag === '0' || typeflag === '\0' || typeflag === '7' ? 'file' : typeflag === '5' ? 'directory' : 'other';
    let remaining = size;
    const content: TarContent = {
      async *[Symbol.asyncIterator]() {
        while (remaining > 0) {
          const chunk = await reader.readSome(Math.min(remaining, 1024 * 1024));
          if (chunk.length === 0) {
            throw new Error('the tar archive is cut short');
          }
          remaining -= chunk.length;
          yield chunk;
        }
      },
    };
    await visit({ path, type, typeflag, size }, content);
    while (remaining > 0) {
      const chunk = await reader.readSome(Math.min(remaining, 1024 * 1024));
      if (chunk.length === 0) {
        throw new Error('the tar archive is cut short');
      }
      remaining -= chunk.length;
    }
    const padding = padded - size;
    if (padding > 0 && (await reader.read(padding)).length < padding) {
      throw new Error('the tar archive is cut short');
    }
  }
}
