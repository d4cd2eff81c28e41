import { describe, expect, it } from 'vitest';
import { headText, quoteForMessage, tailText } from './output-tail';

describe('tailText', () => {
  it('keeps short output as it is', () => {
    expect(tailText('one\ntwo\n')).toBe('one\ntwo\n');
  });

  it('keeps at most 4 KiB, from a line start, marked as cut', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    const tail = tailText(text);
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(4096);
    expect(tail.startsWith('…line ')).toBe(true);
    expect(tail.endsWith('line 999')).toBe(true);
  });

  it('never cuts a UTF-8 character in half', () => {
    const text = '预检失败'.repeat(2000);
    const tail = tailText(text, 100);
    expect(tail).not.toContain('\uFFFD');
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(100);
  });
});

describe('headText / quoteForMessage', () => {
  it('takes the first bytes', () => {
    expect(headText(Buffer.from('<!DOCTYPE html><html>'), 9)).toBe('<!DOCTYPE');
  });

  it('escapes control characters and shortens', () => {
    expect(quoteForMessage('a\nb')).toBe('"a\\nb"');
    expect(quoteForMessage('x'.repeat(200), 20)).toHaveLength(20);
  });
});
