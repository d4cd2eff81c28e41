import { once } from 'node:events';
import { Parser, type ReadEntry } from 'tar';

/** One member of a tar archive as the reader meets it. */
export interface TarEntry {
  /** The member's path as written in the archive (PAX `path` and GNU long names applied). */
  readonly path: string;
  readonly type: 'file' | 'directory' | 'other';
  /** node-tar's name of the member's type (`SymbolicLink`, `CharacterDevice`, …), for messages about `other` members. */
  readonly typeflag: string;
  readonly size: number;
}

/** The bytes of one member, delivered in order; consumed or skipped before the next entry. */
export type TarContent = AsyncIterable<Buffer>;

const TAR_BLOCK = 512;
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/**
 * Reads a POSIX (ustar/PAX) or GNU tar archive as it streams in (node-tar's parser, strict:
 * a damaged header or a cut-short archive is an error, not a warning) and hands each member to
 * `visit` with an iterable of its bytes; what `visit` does not consume is skipped. The next
 * member is read only once `visit` settled, so a slow consumer holds the upload back instead
 * of buffering it. Links, devices and other special members are reported as `other` (callers
 * refuse them). Throws on a damaged archive, and on one without its end-of-archive marker (two
 * zero blocks): cut between two members, an archive looks whole to the parser, and only the
 * marker shows that nothing after the last member was lost.
 */
export async function readTar(source: AsyncIterable<Uint8Array>, visit: (entry: TarEntry, content: TarContent) => Promise<void>): Promise<void> {
  let visiting: Promise<void> = Promise.resolve();
  let visitFailure: unknown = null;
  let sawEntry = false;
  let sawEnd = false;
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      sawEntry = true;
      // node-tar emits the next entry once this one has ended, so visits run one at a time.
      visiting = visiting.then(async () => {
        try {
          if (visitFailure === null) {
            await visit(describe(entry), entry as unknown as TarContent);
          }
        } catch (error) {
          visitFailure ??= error;
        } finally {
          entry.resume();
        }
      });
    },
  });
  parser.once('eof', () => {
    sawEnd = true;
  });
  const ended = new Promise<void>((resolve, reject) => {
    parser.once('error', reject);
    parser.once('close', resolve);
  });
  ended.catch(() => undefined);
  let bytes = 0;
  try {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
      if (!parser.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) {
        await Promise.race([once(parser, 'drain'), ended]);
      }
    }
    parser.end();
    await ended;
    // node-tar accepts a trailing partial header silently; an archive is whole 512-byte blocks.
    if (bytes % TAR_BLOCK !== 0) {
      throw new Error(`it ends inside a ${TAR_BLOCK}-byte block`);
    }
    if (!sawEnd && sawEntry) {
      throw new Error(`cut short: it ends before the end-of-archive marker (two zero ${TAR_BLOCK}-byte blocks) after ${bytes} bytes, so members may be missing`);
    }
  } catch (error) {
    throw new Error(`the upload is not a tar archive (or it is damaged or cut short): ${(error as Error).message}`);
  }
  await visiting;
  if (visitFailure !== null) {
    throw visitFailure;
  }
  if (!sawEntry) {
    throw new Error('the upload is not a tar archive (it has no members)');
  }
}

function describe(entry: ReadEntry): TarEntry {
  const type = FILE_TYPES.has(entry.type) ? 'file' : entry.type === 'Directory' ? 'directory' : 'other';
  return { path: entry.path, type, typeflag: entry.type, size: entry.size ?? 0 };
}
