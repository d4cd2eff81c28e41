import { describe, expect, it } from 'vitest';
import { MAX_HOSTS, allocateSubnet, labNetwork, subnetContains } from './lab-network';

describe('lab network slices', () => {
  it('gives a lab the first free /27 above the block earlier lab versions use, gateway and VIP first', () => {
    const network = allocateSubnet(3, []);
    expect(network).toMatchObject({ subnet: '198.18.0.32/27', prefixLength: 27, gateway: '198.18.0.33', vip: '198.18.0.34', capacity: 28 });
    expect([1, 2, 28].map((n) => network?.hostIp(n))).toEqual(['198.18.0.35', '198.18.0.36', '198.18.0.62']);
    expect(() => network?.hostIp(29)).toThrow(RangeError);
  });

  it('fits seven labs of up to 28 hosts, then says there is no room', () => {
    const taken: string[] = [];
    for (let lab = 0; lab < 7; lab += 1) {
      const network = allocateSubnet(28, taken);
      expect(network).not.toBeNull();
      taken.push(network?.subnet ?? '');
    }
    expect(taken).toEqual([32, 64, 96, 128, 160, 192, 224].map((offset) => `198.18.0.${offset}/27`));
    expect(allocateSubnet(1, taken)).toBeNull();
  });

  it.each([
    [29, [], '198.18.0.64/26'],
    [60, ['198.18.0.32/27', '198.18.0.64/27'], '198.18.0.128/26'],
    [MAX_HOSTS, [], '198.18.0.128/25'],
    [20, ['198.18.0.64/26'], '198.18.0.32/27'],
    [20, ['198.18.0.32/27', '198.18.0.64/26'], '198.18.0.128/27'],
  ])('places %i hosts beside %j in %s', (hosts, taken, subnet) => {
    expect(allocateSubnet(hosts, taken)?.subnet).toBe(subnet);
  });

  it('hands out the slice released longest ago, never-used ones first, so an ended lab\'s addresses come back last', () => {
    const released = new Map([['198.18.0.32/27', 3_000], ['198.18.0.64/27', 1_000], ['198.18.0.96/27', 2_000]]);
    expect(allocateSubnet(3, [], released)?.subnet).toBe('198.18.0.128/27');
    const everyOther = new Map([...[128, 160, 192, 224].map((offset, index): [string, number] => [`198.18.0.${offset}/27`, 4_000 + index]), ...released]);
    expect(allocateSubnet(3, [], everyOther)?.subnet).toBe('198.18.0.64/27');
    expect(allocateSubnet(3, ['198.18.0.64/27'], everyOther)?.subnet).toBe('198.18.0.96/27');
    // A /26 counts the latest release of either /27 in it.
    expect(allocateSubnet(40, [], new Map([['198.18.0.64/27', 1_000], ['198.18.0.96/27', 9_000], ['198.18.0.128/26', 5_000], ['198.18.0.192/27', 6_000]]))?.subnet).toBe('198.18.0.128/26');
  });

  it('refuses host counts no slice holds and slices that are not one', () => {
    expect(() => allocateSubnet(0, [])).toThrow(/hosts must be 1\.\.124/);
    expect(() => allocateSubnet(MAX_HOSTS + 1, [])).toThrow(RangeError);
    expect(() => labNetwork('198.18.0.40/27')).toThrow(/not a lab slice/);
    expect(() => labNetwork('10.0.0.0/27')).toThrow(/not a lab slice/);
  });

  it('tells whether an address lies in a slice', () => {
    expect(subnetContains('198.18.0.64/27', '198.18.0.95')).toBe(true);
    expect(subnetContains('198.18.0.64/27', '198.18.0.96')).toBe(false);
    expect(subnetContains('198.18.0.64/27', '198.18.1.70')).toBe(false);
  });
});
