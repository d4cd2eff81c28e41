import { createHash } from 'node:crypto';

/**
 * The stand-in rpm file format. It starts like a real package — the 96-byte
 * lead (magic `ed ab ee db`, format 3.0, binary, the package's NVR) and the
 * header magic `8e ad e8 01` — so `file` calls it an RPM, and a non-rpm file
 * is refused on the magic as real `rpm` refuses it. The header is JSON (the
 * package's metadata) and the payload is opaque bytes whose SHA-256 the
 * header records, so a truncated or corrupted download fails verification.
 */
export interface RpmMetadata {
  readonly name: string;
  readonly version: string;
  readonly release: string;
  readonly arch: string;
  readonly summary: string;
  /** Names of packages this one needs (resolved within the transaction or the installed set). */
  readonly requires: readonly string[];
  readonly payloadSize: number;
  readonly payloadSha256: string;
}

/** A decoded package file. */
export interface RpmPackage {
  readonly metadata: RpmMetadata;
  readonly payload: Buffer;
}

const LEAD_MAGIC = Buffer.from([0xed, 0xab, 0xee, 0xdb]);
const HEADER_MAGIC = Buffer.from([0x8e, 0xad, 0xe8, 0x01]);
const LEAD_SIZE = 96;

/** Why a file is not an installable package, in rpm's words. */
export class RpmFormatError extends Error {
  constructor(message: string, readonly kind: 'not-rpm' | 'bad-header' | 'bad-digest') {
    super(message);
    this.name = 'RpmFormatError';
  }
}

/** `name-version-release.arch` */
export function nevra(metadata: Pick<RpmMetadata, 'name' | 'version' | 'release' | 'arch'>): string {
  return `${metadata.name}-${metadata.version}-${metadata.release}.${metadata.arch}`;
}

/** The file name a package is published under. */
export function rpmFileName(metadata: Pick<RpmMetadata, 'name' | 'version' | 'release' | 'arch'>): string {
  return `${nevra(metadata)}.rpm`;
}

/** Encodes a package file. */
export function encodeRpm(
  metadata: Omit<RpmMetadata, 'payloadSize' | 'payloadSha256'>,
  payload: Buffer,
): Buffer {
  const full: RpmMetadata = {
    ...metadata,
    payloadSize: payload.length,
    payloadSha256: createHash('sha256').update(payload).digest('hex'),
  };
  const lead = Buffer.alloc(LEAD_SIZE);
  LEAD_MAGIC.copy(lead, 0);
  lead.writeUInt8(3, 4); // major
  lead.writeUInt8(0, 5); // minor
  lead.writeUInt16BE(0, 6); // binary package
  lead.writeUInt16BE(1, 8); // archnum: x86
  lead.write(`${metadata.name}-${metadata.version}-${metadata.release}`.slice(0, 65), 10, 'latin1');
  lead.writeUInt16BE(1, 76); // osnum: Linux
  lead.writeUInt16BE(5, 78); // signature type: header-style
  const header = Buffer.from(JSON.stringify(full));
  const headerIntro = Buffer.alloc(12);
  HEADER_MAGIC.copy(headerIntro, 0);
  headerIntro.writeUInt32BE(0, 4);
  headerIntro.writeUInt32BE(header.length, 8);
  return Buffer.concat([lead, headerIntro, header, payload]);
}

/** Decodes and verifies a package file; throws {@link RpmFormatError} in rpm's words. */
export function decodeRpm(file: Buffer, verifyPayload = true): RpmPackage {
  if (file.length < LEAD_SIZE + 12 || !file.subarray(0, 4).equals(LEAD_MAGIC)) {
    throw new RpmFormatError('not an rpm package (or package manifest)', 'not-rpm');
  }
  const intro = file.subarray(LEAD_SIZE, LEAD_SIZE + 12);
  if (!intro.subarray(0, 4).equals(HEADER_MAGIC)) {
    throw new RpmFormatError('headerRead failed: hdr magic: BAD', 'bad-header');
  }
  const headerLength = intro.readUInt32BE(8);
  const headerStart = LEAD_SIZE + 12;
  if (headerStart + headerLength > file.length) {
    throw new RpmFormatError(`headerRead failed: hdr data: BAD, no. of bytes(${headerLength}) out of range`, 'bad-header');
  }
  let metadata: RpmMetadata;
  try {
    metadata = JSON.parse(file.subarray(headerStart, headerStart + headerLength).toString()) as RpmMetadata;
  } catch {
    throw new RpmFormatError('headerRead failed: hdr blob(s): BAD', 'bad-header');
  }
  const payload = file.subarray(headerStart + headerLength);
  if (verifyPayload) {
    const actual = createHash('sha256').update(payload).digest('hex');
    if (payload.length !== metadata.payloadSize || actual !== metadata.payloadSha256) {
      throw new RpmFormatError(`Payload SHA256 digest: BAD (Expected ${metadata.payloadSha256} != ${actual})`, 'bad-digest');
    }
  }
  return { metadata, payload };
}
