/**
 * Decodes an RFC 2397 `data:` URL as Ignition uses them for file contents:
 * `data:[<mediatype>][;base64],<data>`; without `;base64` the data is
 * percent-encoded (`data:,` is an empty file).
 *
 * @see https://coreos.github.io/ignition/configuration-v3_2/ (storage.files.contents.source)
 */
export function decodeDataUrl(source: string): Buffer {
  if (!source.startsWith('data:')) {
    throw new Error(`not a data URL: ${source.slice(0, 40)}`);
  }
  const comma = source.indexOf(',');
  if (comma < 0) {
    throw new Error('data URL without a comma');
  }
  const meta = source.slice(5, comma);
  const data = source.slice(comma + 1);
  if (meta.split(';').some((part) => part.trim().toLowerCase() === 'base64')) {
    const cleaned = data.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(cleaned)) {
      throw new Error('data URL has invalid base64');
    }
    return Buffer.from(cleaned, 'base64');
  }
  return percentDecode(data);
}

/** Percent-decoding to bytes (not UTF-8 text), so binary files survive. */
function percentDecode(data: string): Buffer {
  const out: number[] = [];
  const bytes = Buffer.from(data, 'utf8');
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i] as number;
    if (byte === 0x25 /* % */) {
      const hex = bytes.subarray(i + 1, i + 3).toString('latin1');
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
        throw new Error(`data URL has an invalid escape at ${i}`);
      }
      out.push(parseInt(hex, 16));
      i += 2;
    } else {
      out.push(byte);
    }
  }
  return Buffer.from(out);
}
