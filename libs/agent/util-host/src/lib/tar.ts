import { gzipSync } from 'node:zlib';

/** One regular file in an archive. */
export interface TarEntry {
  /** Relative path, at most 100 bytes (longer names are refused rather than silently cut). */
  readonly name: string;
  readonly data: string | Uint8Array;
  /** Permission bits (default 0o644). */
  readonly mode?: number;
  /** Modification time in ms since the epoch (default 0). */
  readonly mtimeMs?: number;
}

const BLOCK = 512;

/**
 * A POSIX ustar archive of regular files, enough for a diagnostics bundle
 * that `tar xzf` unpacks anywhere; no dependency.
 *
 * @see https://pubs.opengroup.org/onlinepubs/9699919799/utilities/pax.html#tag_20_92_13_06
 */
export function createTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data);
    parts.push(header(entry, data.length), data);
    const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (padding > 0) {
      parts.push(Buffer.alloc(padding));
    }
  }
  // Two zero blocks end the archive.
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/** {@link createTar}, gzipped. */
export function createTarGz(entries: readonly TarEntry[]): Buffer {
  return gzipSync(createTar(entries), { level: 9 });
}

function header(entry: TarEntry, size: number): Buffer {
  const name = Buffer.from(entry.name, 'utf8');
  if (name.length === 0 || name.length > 100 || entry.name.startsWith('/') || entry.name.split('/').includes('..')) {
    throw new RangeError(`tar entry name ${JSON.stringify(entry.name)} must be a relative path of 1..100 bytes`);
  }
  const block = Buffer.alloc(BLOCK);
  name.copy(block, 0);
  octal(block, 100, 8, entry.mode ?? 0o644);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, size);
  octal(block, 136, 12, Math.floor((entry.mtimeMs ?? 0) / 1000));
  // The checksum is computed with its own field as spaces.
  block.fill(0x20, 148, 156);
  block.write('0', 156, 'latin1');
  block.write('ustar\u000000', 257, 'latin1');
  block.write('root', 265, 'latin1');
  block.write('root', 297, 'latin1');
  let sum = 0;
  for (const byte of block) {
    sum += byte;
  }
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'latin1');
  return block;
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  const text = value.toString(8).padStart(length - 1, '0');
  if (text.length > length - 1) {
    throw new RangeError(`${value} does not fit a ${length}-byte tar field`);
  }
  block.write(`${text}\u0000`, offset, 'latin1');
}
