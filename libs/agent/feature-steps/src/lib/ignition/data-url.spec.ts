import { describe, expect, it } from 'vitest';
import { decodeDataUrl } from './data-url';

describe('decodeDataUrl', () => {
  it.each([
    ['data:text/plain;charset=utf-8;base64,aGVsbG8gd29ybGQK', 'hello world\n'],
    ['data:;base64,aGk=', 'hi'],
    ['data:,', ''],
    ['data:,-----BEGIN%20CERTIFICATE-----%0AMIIB%2Babc%3D%0A-----END%20CERTIFICATE-----%0A', '-----BEGIN CERTIFICATE-----\nMIIB+abc=\n-----END CERTIFICATE-----\n'],
    ['data:,net.ipv4.ip_forward%20%3D%201', 'net.ipv4.ip_forward = 1'],
    ['data:text/plain,plain%E4%BD%A0', 'plain你'],
  ])('%s', (url, text) => {
    expect(decodeDataUrl(url).toString('utf8')).toBe(text);
  });

  it('keeps binary bytes of percent-encoded data', () => {
    expect([...decodeDataUrl('data:,%00%FF%7F')]).toEqual([0, 255, 127]);
  });

  it.each(['https://example.com/x', 'data:no-comma', 'data:,bad%zz', 'data:;base64,@@@'])('refuses %s', (url) => {
    expect(() => decodeDataUrl(url)).toThrow();
  });
});
