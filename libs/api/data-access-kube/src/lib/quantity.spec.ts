import { describe, expect, it } from 'vitest';
import { cpuMillicores, parseQuantity, wholeUnits } from './quantity';

describe('resource quantities', () => {
  it.each([
    ['100m', 0.1],
    ['1', 1],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['128Mi', 128 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['2k', 2000],
    ['1M', 1e6],
    ['1e3', 1000],
    ['1E3', 1000],
    ['5E', 5e18],
    ['250u', 0.00025],
    [' 3 ', 3],
  ])('%s is %d', (text, value) => {
    expect(parseQuantity(text)).toBeCloseTo(value, 12);
  });

  it.each(['', 'abc', '1Xi', '1.2.3', '--1', undefined, null])('%s is not a quantity', (text) => {
    expect(parseQuantity(text)).toBeNull();
  });

  it('rounds CPU up to millicores without float noise, memory up to bytes', () => {
    expect(cpuMillicores('0.1')).toBe(100);
    expect(cpuMillicores('100m')).toBe(100);
    expect(cpuMillicores('1.0001')).toBe(1001);
    expect(cpuMillicores('250u')).toBe(1);
    expect(cpuMillicores('3500m')).toBe(3500);
    expect(wholeUnits('1.5Ki')).toBe(1536);
    expect(wholeUnits('110')).toBe(110);
  });
});
