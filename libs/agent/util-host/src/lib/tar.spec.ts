import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createTar, createTarGz } from './tar';

/** Reads a ustar archive back (the format `tar xzf` expects). */
function readTar(archive: Buffer): { name: string; mode: number; size: number; data: string; checksumOk: boolean; magic: string }[] {
  const entries = [];
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) {
      break;
    }
    const field = (start: number, length: number) => header.subarray(start, start + length).toString('latin1').replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12), 8);
    const stored = parseInt(field(148, 8), 8);
    const copy = Buffer.from(header);
    copy.fill(0x20, 148, 156);
    const sum = copy.reduce((total, byte) => total + byte, 0);
    entries.push({
      name: field(0, 100),
      mode: parseInt(field(100, 8), 8),
      size,
      data: archive.subarray(offset + 512, offset + 512 + size).toString('utf8'),
      checksumOk: sum === stored,
      magic: header.subarray(257, 265).toString('latin1'),
    });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

describe('createTar (ustar)', () => {
  it('writes headers, contents and padding that read back', () => {
    const archive = createTar([
      { name: 'summary.json', data: '{"ok":false}\n' },
      { name: 'agent.log', data: 'x'.repeat(1500), mode: 0o600 },
      { name: 'empty.txt', data: '' },
    ]);
    expect(archive.length % 512).toBe(0);
    const entries = readTar(archive);
    expect(entries.map((entry) => [entry.name, entry.size, entry.mode])).toEqual([
      ['summary.json', 13, 0o644],
      ['agent.log', 1500, 0o600],
      ['empty.txt', 0, 0o644],
    ]);
    expect(entries.every((entry) => entry.checksumOk && entry.magic === 'ustar\u000000')).toBe(true);
    expect(entries[1]?.data).toBe('x'.repeat(1500));
  });

  it('gzips', () => {
    const archive = createTarGz([{ name: 'a.txt', data: 'hello' }]);
    expect(archive[0]).toBe(0x1f);
    expect(readTar(gunzipSync(archive))[0]?.data).toBe('hello');
  });

  it.each(['', '/etc/passwd', '../x', 'a'.repeat(101)])('refuses the entry name %j', (name) => {
    expect(() => createTar([{ name, data: '' }])).toThrow(RangeError);
  });
});
