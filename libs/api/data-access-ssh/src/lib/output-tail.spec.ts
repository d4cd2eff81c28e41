import { describe, expect, it } from 'vitest';
import { OutputTail } from './output-tail';

describe('OutputTail', () => {
  it('keeps everything below the limit', () => {
    const tail = new OutputTail(10);
    tail.write(Buffer.from('abc'));
    tail.write(Buffer.from('def'));
    expect(tail.text()).toBe('abcdef');
    expect(tail.truncated).toBe(false);
    expect(tail.total).toBe(6);
  });

  it('keeps exactly the last bytes, across and within chunks', () => {
    const tail = new OutputTail(5);
    for (const piece of ['12345', '678', '9', 'abcdefghij', 'XY']) {
      tail.write(Buffer.from(piece));
    }
    expect(tail.text()).toBe('hijXY');
    expect(tail.truncated).toBe(true);
    expect(tail.total).toBe(21);
  });

  it('bounds memory for a large stream', () => {
    const tail = new OutputTail(64 * 1024);
    const chunk = Buffer.alloc(1000, 0x61);
    for (let index = 0; index < 10_000; index += 1) {
      tail.write(chunk);
    }
    expect(tail.bytes().length).toBe(64 * 1024);
    expect(tail.total).toBe(10_000_000);
  });

  it('does not start with half a UTF-8 character', () => {
    const tail = new OutputTail(4);
    tail.write(Buffer.from('aaé✓'));
    expect(tail.text()).toBe('✓');
  });
});
